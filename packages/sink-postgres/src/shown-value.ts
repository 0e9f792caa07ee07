/** A refused value as a message shows it: JSON where it has one, else its type. */
export function shown(value: unknown): string {
  let json: string | undefined;
  try {
    // Typed as string, but undefined for undefined, functions and symbols.
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return json ?? typeof value;
}
