/** A literal (true, false, null or a number) where the parser stands. */
const LITERAL = /(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

/** A JSON value whose objects keep their members in the order of the text. */
export type Json =
  null | boolean | number | string | Json[] | { readonly members: [string, Json][] };

/**
 * Parses JSON keeping each object's members in text order. `JSON.parse`
 * moves integer-like names ("7", "42") ahead of the others, and Pulsar
 * property names may be anything: a frame whose properties have such a
 * name, or that JSON.parse refuses (to say where it fails), is read here.
 * Slow (a character at a time); the frames a broker sends every day never
 * come here.
 */
export function parseOrdered(text: string): Json {
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`${what} at character ${String(at)}`);
  };
  const space = (): void => {
    while (at < text.length && ' \t\r\n'.includes(text.charAt(at))) at++;
  };
  const string = (): string => {
    const start = at;
    at++;
    while (at < text.length && text.charAt(at) !== '"') at += text.charAt(at) === '\\' ? 2 : 1;
    if (at >= text.length) fail('unterminated string');
    at++;
    return JSON.parse(text.slice(start, at)) as string;
  };
  const value = (): Json => {
    space();
    const c = text.charAt(at);
    if (c === '"') return string();
    if (c === '{') {
      at++;
      const members: [string, Json][] = [];
      space();
      if (text.charAt(at) === '}') {
        at++;
        return { members };
      }
      for (;;) {
        space();
        if (text.charAt(at) !== '"') fail('expected a member name');
        const name = string();
        space();
        if (text.charAt(at) !== ':') fail("expected ':'");
        at++;
        members.push([name, value()]);
        space();
        const next = text.charAt(at++);
        if (next === '}') return { members };
        if (next !== ',') fail("expected ',' or '}'");
      }
    }
    if (c === '[') {
      at++;
      const items: Json[] = [];
      space();
      if (text.charAt(at) === ']') {
        at++;
        return items;
      }
      for (;;) {
        items.push(value());
        space();
        const next = text.charAt(at++);
        if (next === ']') return items;
        if (next !== ',') fail("expected ',' or ']'");
      }
    }
    LITERAL.lastIndex = at;
    const literal = LITERAL.exec(text);
    if (literal === null) return fail('unexpected character');
    at += literal[0].length;
    return JSON.parse(literal[0]) as Json;
  };
  const result = value();
  space();
  if (at !== text.length) fail('trailing characters');
  return result;
}

export function isObject(v: Json | undefined): v is { readonly members: [string, Json][] } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
