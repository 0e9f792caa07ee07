import { isDeepStrictEqual } from 'node:util';
import ts from 'typescript';

/**
 * Checks that the `@defaultValue` of every key of a documented config
 * interface is the default its schema really applies. The type tests prove
 * that an interface and its schema agree on keys and types; this proves the
 * one thing a type cannot: that the default a user reads on hover is true.
 *
 * `defaults` is what the schema makes of an input with only the required
 * keys (`{}` for most configs); required keys are not checked. A key whose
 * type is another interface, with no tag of its own, is walked into. A tag's value is read as a literal: a number
 * (`67108864 (64 MiB)` reads 67108864), a quoted string, `true`/`false`, or
 * JSON in backticks (`` `{}` ``). A value in backticks that is not JSON
 * (`` `${hostname()}:${process.pid}` ``) is computed where the config is
 * used, so the schema must leave that key undefined. Returns one line per
 * mismatch, naming the key's path.
 */
export function checkDocumentedDefaults(
  program: ts.Program,
  file: string,
  interfaceName: string,
  defaults: unknown,
): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  if (source === undefined) return [`${file}: not in the program`];
  const declaration = source.statements.find(
    (s): s is ts.InterfaceDeclaration =>
      ts.isInterfaceDeclaration(s) && s.name.text === interfaceName,
  );
  if (declaration === undefined) return [`${file}: no interface ${interfaceName}`];
  const problems: string[] = [];
  walk(checker, checker.getTypeAtLocation(declaration.name), defaults, interfaceName, problems);
  return problems;
}

function walk(
  checker: ts.TypeChecker,
  type: ts.Type,
  defaults: unknown,
  path: string,
  problems: string[],
): void {
  for (const property of checker.getPropertiesOfType(type)) {
    // A required key has no default to document.
    if ((property.flags & ts.SymbolFlags.Optional) === 0) continue;
    const at = `${path}.${property.name}`;
    const actual = isRecord(defaults) ? defaults[property.name] : undefined;
    const declared = property.valueDeclaration ?? property.declarations?.[0];
    if (declared === undefined) continue;
    const propertyType = checker.getNonNullableType(
      checker.getTypeOfSymbolAtLocation(property, declared),
    );
    const tag = property.getJsDocTags(checker).find((t) => t.name === 'defaultValue');
    // A nested config is walked into; an interface-typed key with a default
    // of its own (a seam such as a file system) is one value.
    if (tag === undefined && isInterface(propertyType)) {
      walk(checker, propertyType, actual, at, problems);
      continue;
    }
    if (tag === undefined) {
      problems.push(`${at}: no @defaultValue (the schema's default is ${show(actual)})`);
      continue;
    }
    const text = ts.displayPartsToString(tag.text).trim();
    const documented = readLiteral(text);
    if (documented.kind === 'computed') {
      if (actual !== undefined) {
        problems.push(
          `${at}: documented as computed (${text}), but the schema defaults it to ${show(actual)}`,
        );
      }
    } else if (!isDeepStrictEqual(documented.value, actual)) {
      problems.push(`${at}: documented ${text}, but the schema's default is ${show(actual)}`);
    }
  }
}

function isInterface(type: ts.Type): boolean {
  const symbol = type.getSymbol();
  return symbol !== undefined && (symbol.flags & ts.SymbolFlags.Interface) !== 0;
}

type Literal = { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'computed' };

function readLiteral(text: string): Literal {
  const code = /^`([^`]*)`/.exec(text);
  if (code !== null) {
    try {
      return { kind: 'value', value: JSON.parse(code[1] ?? '') };
    } catch {
      return { kind: 'computed' };
    }
  }
  const quoted = /^'([^']*)'/.exec(text);
  if (quoted !== null) return { kind: 'value', value: quoted[1] };
  const word = text.split(/\s/)[0] ?? '';
  if (word === 'true' || word === 'false') return { kind: 'value', value: word === 'true' };
  const n = Number(word);
  return word !== '' && Number.isFinite(n)
    ? { kind: 'value', value: n }
    : { kind: 'value', value: text };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

function show(v: unknown): string {
  return v === undefined ? 'undefined' : JSON.stringify(v);
}
