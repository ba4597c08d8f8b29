/**
 * The runs filter's node: a box that suggests the nodes whose name starts with what is typed (a
 * combobox: arrows move through the suggestions, Enter picks, Escape closes), 20 at a time with
 * "More nodes" for the next 20, so a node is found by name among any number of them. Names are
 * case-sensitive; a restarted executor is another node of the same name, each shown with its state
 * and start (and its id, where the list shows another of its name). Enter on a whole name picks
 * that node; on a name several nodes share, it opens them to choose from (the newest picked silently
 * was not always the one meant, and the box showed the same name whichever it was); on text no
 * name starts with, it is taken as a node id (pasted from a run's page). The chosen node's state and
 * start are shown beside the box. An emptied box is any node; leaving the box with a name of one
 * node in it picks that node, with a shared name picks none and says so, anything else is undone.
 */
import { useEffect, useId, useState, type KeyboardEvent } from "react";
import { Time } from "../../ui/time";
import { useDebounced } from "../jobs/use-debounced";
import { statusWord } from "../nodes/node-words";
import { shortId } from "./run-table";
import { useNodeName, useNodeSuggestions, type NodeSuggestion } from "./use-node-suggestions";

const TYPING_MS = 250;

export function NodePicker({ id, value, onChange }: { id: string; value: string; onChange(nodeId: string): void }) {
  const listId = useId();
  const chosen = useNodeName(value);
  // The name of a node just picked, before its query answers.
  const [picked, setPicked] = useState<{ id: string; name: string } | null>(null);
  const label = value ? (picked?.id === value ? picked.name : (chosen.name ?? value)) : "";
  const [text, setText] = useState(label);
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  // A name several nodes share, left in the box without choosing: picked none, and says so.
  const [unpicked, setUnpicked] = useState<{ name: string; count: string } | null>(null);
  // The address changed elsewhere (Back, Clear), or the chosen node's name arrived: show it.
  useEffect(() => {
    if (!editing) setText(label);
  }, [label, editing]);

  const typed = useDebounced(text.trim(), TYPING_MS);
  const s = useNodeSuggestions(open ? typed : null);
  // The options: the nodes, then "More nodes" while there are more.
  const count = s.nodes.length + (s.hasNext ? 1 : 0);
  useEffect(() => setActive(-1), [typed]);
  const optionId = (i: number) => `${listId}-${i}`;
  // The nodes of the suggestions named exactly `name` (the latest start first: a name's nodes come
  // before longer names it begins), and how many there are in words ("20 or more" past a page).
  const named = (name: string) => (typed === name ? s.nodes.filter((n) => n.name === name) : []);
  const howMany = (nodes: NodeSuggestion[]) => (nodes.length === s.nodes.length && s.hasNext ? `${nodes.length} or more` : String(nodes.length));
  const shared = (name: string) => s.nodes.filter((n) => n.name === name).length > 1;
  // The option the arrows reach stays in view in the scrolling list.
  useEffect(() => {
    if (active >= 0) document.getElementById(`${listId}-${active}`)?.scrollIntoView({ block: "nearest" });
  }, [active, listId]);

  const close = () => {
    setOpen(false);
    setActive(-1);
    setEditing(false);
  };
  const pick = (n: NodeSuggestion) => {
    setPicked({ id: n.id, name: n.name });
    setText(n.name);
    close();
    if (n.id !== value) onChange(n.id);
  };
  const commit = () => {
    const t = text.trim();
    if (!t) {
      close();
      if (value) onChange("");
      return;
    }
    const exact = named(t);
    if (exact.length === 1) return pick(exact[0]!);
    if (exact.length > 1) {
      // One name, several nodes: open them to choose from, the first of them active.
      setOpen(true);
      setActive(s.nodes.indexOf(exact[0]!));
      return;
    }
    // Nothing of that name: a node id (the suggestions for it have been answered, and are none).
    if (typed === t && s.loaded && s.nodes.length === 0) {
      close();
      if (t !== value) onChange(t);
      return;
    }
    setOpen(true);
    setActive(count > 0 ? 0 : -1);
  };
  const choose = (i: number) => {
    if (i < s.nodes.length) pick(s.nodes[i]!);
    else s.loadMore();
  };

  const onKeyDown = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) return setOpen(true);
      const step = e.key === "ArrowDown" ? 1 : -1;
      setActive((a) => (count === 0 ? -1 : Math.min(count - 1, Math.max(-1, a + step))));
    } else if (e.key === "Enter") {
      e.preventDefault();
      if (open && active >= 0 && active < count) choose(active);
      else commit();
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      setText(label);
      close();
    }
  };

  const status = !open
    ? ""
    : s.error
      ? `Could not list the nodes: ${s.error.message}`
      : !s.loaded
        ? "Looking for nodes…"
        : s.nodes.length === 0
          ? typed
            ? `No node's name starts with “${typed}” (names are case-sensitive). Enter filters by it as a node id.`
            : "No node has registered yet."
          : named(typed).length > 1
            ? `${howMany(named(typed))} nodes are named “${typed}”: choose one by its state and start (a restarted executor is a new node of the same name)`
            : `${s.nodes.length}${s.hasNext ? "+" : ""} node${s.nodes.length === 1 && !s.hasNext ? "" : "s"}${typed ? ` named “${typed}…”` : ""}`;
  const which = value && chosen.node && !open ? chosen.node : null;
  const describedBy = [value && chosen.gone ? `${id}-gone` : "", which ? `${id}-which` : "", unpicked ? `${id}-unpicked` : ""].filter(Boolean).join(" ");

  return (
    <div className="node-picker">
      <label htmlFor={id}>
        Node
        <input
          id={id}
          type="text"
          role="combobox"
          aria-autocomplete="list"
          aria-expanded={open && count > 0}
          aria-controls={listId}
          aria-activedescendant={open && active >= 0 && active < count ? optionId(active) : undefined}
          aria-describedby={describedBy || undefined}
          value={text}
          placeholder="any: type a name"
          maxLength={255}
          autoComplete="off"
          spellCheck={false}
          onFocus={() => {
            setOpen(true);
            setUnpicked(null);
          }}
          onClick={() => setOpen(true)}
          onChange={(e) => {
            setText(e.target.value);
            setUnpicked(null);
            setEditing(true);
            setOpen(true);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => {
            // Leaving the box: emptied is any node, a name of one node is that node, a name several
            // nodes share is none of them (said beside the box), anything else is undone.
            const t = text.trim();
            const exact = named(t);
            if (exact.length === 1) return pick(exact[0]!);
            if (exact.length > 1) setUnpicked({ name: t, count: howMany(exact) });
            if (!t && value) onChange("");
            else setText(label);
            close();
          }}
        />
      </label>
      {value && chosen.gone && !open && (
        <span id={`${id}-gone`} className="np-gone muted">no node has this id now</span>
      )}
      {which && (
        <span id={`${id}-which`} className="np-which muted">
          {statusWord(which.status)}, started <Time iso={which.startedAt} />
        </span>
      )}
      {unpicked && !open && (
        <span id={`${id}-unpicked`} className="np-gone" role="status">
          “{unpicked.name}” names {unpicked.count} nodes: open the box and choose one
        </span>
      )}
      <div className="np-popup" hidden={!open}>
        <ul id={listId} role="listbox" aria-label="Nodes" hidden={count === 0}>
          {s.nodes.map((n, i) => (
            <li
              key={n.id}
              id={optionId(i)}
              role="option"
              aria-selected={i === active}
              className={n.id === value ? "np-option np-chosen" : "np-option"}
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => pick(n)}
            >
              <span className="np-name">{n.name}</span>
              <span className="np-facts muted">
                {statusWord(n.status)}, started <Time iso={n.startedAt} />
                {shared(n.name) && <span className="mono">, {shortId(n.id)}</span>}
              </span>
            </li>
          ))}
          {s.hasNext && (
            <li id={optionId(s.nodes.length)} role="option" aria-selected={active === s.nodes.length} className="np-option np-more" onMouseDown={(e) => e.preventDefault()} onClick={() => s.loadMore()}>
              {s.loading ? "Loading more nodes…" : "More nodes…"}
            </li>
          )}
        </ul>
        <p className="np-status muted" role="status">{status}</p>
      </div>
    </div>
  );
}
