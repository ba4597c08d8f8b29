/**
 * What a name shown to people (a job's, an API key's, an alert rule's, an artifact's) may not hold:
 * C0 and C1 control characters, DEL, and the characters that make text display as something else
 * than it is — line and paragraph separators and the bidirectional controls (U+061C, U+200E/F,
 * U+202A–U+202E, U+2066–U+2069; "evil\u202Etxt.exe" reads "evilexe.txt"). One rule for every name,
 * so the console, the command line and logs never show a name that lies about itself.
 */
export const HIDDEN_CHARACTERS = "\\u0000-\\u001f\\u007f-\\u009f\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069";

/** How a refusal says it: "with no control characters (nor bidi controls such as U+202E)". */
export const HIDDEN_CHARACTERS_RULE = "no control characters (nor bidi controls such as U+202E)";

const HIDDEN_RE = new RegExp(`[${HIDDEN_CHARACTERS}]`);

/** True when `text` holds a character {@link HIDDEN_CHARACTERS} names. */
export function hasHiddenCharacters(text: string): boolean {
  return HIDDEN_RE.test(text);
}

/**
 * What is wrong with text that is no Unicode (an unpaired UTF-16 surrogate, such as JSON's
 * "\ud800" alone), or null. Stored, it becomes U+FFFD: a name would be saved as another than the
 * one given, and no longer match it.
 */
export function unpairedSurrogateProblem(text: string): string | null {
  const at = text.search(/\p{Cs}/u);
  if (at < 0) return null;
  return `holds an unpaired UTF-16 surrogate (\\u${text.charCodeAt(at).toString(16)} at character ${at + 1}), which is no character: send it as valid Unicode`;
}
