/**
 * What the frame shows when a view cannot be shown, instead of an empty page: a view whose code
 * could not be loaded (the server is restarting, or was updated since the tab opened and the old
 * chunks are gone) or that failed while rendering. The navigation stays; another address clears it
 * (the frame passes it the address), and Reload loads the console afresh.
 */
import { Component, type ReactNode } from "react";

/** A lazy view's chunk (or its CSS) that the browser could not fetch. */
export function isChunkLoadError(e: unknown): boolean {
  const m = e instanceof Error ? e.message : String(e);
  return /dynamically imported module|Unable to preload CSS|Importing a module script failed|error loading dynamically imported module/i.test(m);
}

export class ViewErrorBoundary extends Component<{ address: string; children: ReactNode }, { error: unknown; address: string }> {
  override state: { error: unknown; address: string } = { error: null, address: this.props.address };

  static getDerivedStateFromError(error: unknown): { error: unknown } {
    return { error };
  }

  /** Another address clears the error (the views themselves are not remounted for it). */
  static getDerivedStateFromProps(props: { address: string }, state: { error: unknown; address: string }): Partial<{ error: unknown; address: string }> | null {
    return props.address === state.address ? null : { error: null, address: props.address };
  }

  override render() {
    const { error } = this.state;
    if (error === null) return this.props.children;
    const chunk = isChunkLoadError(error);
    const message = error instanceof Error ? error.message : String(error);
    return (
      <section className="page">
        <h1 tabIndex={-1}>This page could not be shown</h1>
        <p role="alert" className="error">
          {chunk
            ? "The console could not load this page from the server: the server may be restarting, or it was updated since this tab was opened. Reload when it is back."
            : `It failed while showing: ${message}`}
        </p>
        <p>
          <button type="button" onClick={() => location.reload()}>Reload</button> or go to another page.
        </p>
      </section>
    );
  }
}
