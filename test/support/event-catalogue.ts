import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Every event type the service declares, read from the source of `src/events` (every
 * module file, the store adapters aside), so a new module's events are in the list
 * without anyone keeping one. The forms in use:
 *
 * - `DomainEvent<'LeadCreated', …>` (or a union of literals): the literal names;
 * - `DomainEvent<\`${string}Created\`, …>` (the lead-settings stream): the suffix, after
 *   each prefix of the one exported constant of the file whose values are all PascalCase
 *   names (`SETTINGS_COLLECTIONS`);
 * - `RecordEvent<ContactFields>` and the `*Fields` of records built with
 *   `recordAggregate<XFields>('Name', …)` in `src/commands`: `NameCreated`,
 *   `NameUpdated`, `NameDeleted`;
 * - exported `*_EVENTS` arrays of literals (`ROLE_EVENTS`).
 *
 * A `DomainEvent` / `RecordEvent` written in any other way is reported in `problems`
 * rather than skipped, so the catalogue is taught the new form instead of missing it.
 */
export interface EventCatalogue {
  /** Sorted, unique. */
  types: string[];
  /** Where each type was found (file, form). */
  sources: Map<string, string[]>;
  /** Declarations the scanner could not read. */
  problems: string[];
}

const ROOT = path.resolve(import.meta.dirname, '../..');
const EVENTS_DIR = path.join(ROOT, 'src/events');
const COMMANDS_DIR = path.join(ROOT, 'src/commands');
const RECORD_SUFFIXES = ['Created', 'Updated', 'Deleted'];
const PASCAL = /^[A-Z][A-Za-z0-9]*$/;

function tsFiles(dir: string, skip: (dir: string) => boolean = () => false): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return skip(full) ? [] : tsFiles(full, skip);
      return entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [full] : [];
    })
    .sort();
}

const parse = (file: string) => ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);

function visit(node: ts.Node, each: (node: ts.Node) => void): void {
  each(node);
  node.forEachChild((child) => visit(child, each));
}

const where = (file: ts.SourceFile, node: ts.Node) => {
  const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
  return `${path.relative(ROOT, file.fileName)}:${line + 1}`;
};

/** String literal values of an expression `'A'`, `['A', 'B'] as const`, `{ k: 'A' } as const`. */
function literalValues(expression: ts.Expression): string[] | null {
  let e = expression;
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression;
  if (ts.isStringLiteralLike(e)) return [e.text];
  const elements = ts.isArrayLiteralExpression(e)
    ? [...e.elements]
    : ts.isObjectLiteralExpression(e)
      ? e.properties.map((p) => (ts.isPropertyAssignment(p) ? p.initializer : null))
      : null;
  if (!elements) return null;
  const values: string[] = [];
  for (const element of elements) {
    if (!element || !ts.isStringLiteralLike(element)) return null;
    values.push(element.text);
  }
  return values;
}

/** Literal names of a type argument: `'A'`, `'A' | 'B'`; null when it is anything else. */
function literalNames(type: ts.TypeNode): string[] | null {
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) return [type.literal.text];
  if (ts.isUnionTypeNode(type)) {
    const names = type.types.map(literalNames);
    return names.every((n) => n !== null) ? names.flat() : null;
  }
  if (ts.isParenthesizedTypeNode(type)) return literalNames(type.type);
  return null;
}

/** `${string}Created` → 'Created'; null for any other template. */
function templateSuffix(type: ts.TypeNode): string | null {
  if (!ts.isTemplateLiteralTypeNode(type) || type.head.text !== '' || type.templateSpans.length !== 1) return null;
  const span = type.templateSpans[0];
  if (span.type.kind !== ts.SyntaxKind.StringKeyword || !PASCAL.test(span.literal.text)) return null;
  return span.literal.text;
}

/** `recordAggregate<XFields>('Name', …)` calls under src/commands: fields type name → record name. */
function recordAggregateNames(): Map<string, string> {
  const names = new Map<string, string>();
  for (const file of tsFiles(COMMANDS_DIR).map(parse)) {
    visit(file, (node) => {
      if (!ts.isCallExpression(node) || !ts.isIdentifier(node.expression) || node.expression.text !== 'recordAggregate') return;
      const typeArg = node.typeArguments?.[0];
      const nameArg = node.arguments[0];
      if (typeArg && ts.isTypeReferenceNode(typeArg) && ts.isIdentifier(typeArg.typeName) && nameArg && ts.isStringLiteralLike(nameArg)) {
        names.set(typeArg.typeName.text, nameArg.text);
      }
    });
  }
  return names;
}

export function eventCatalogue(): EventCatalogue {
  const sources = new Map<string, string[]>();
  const problems: string[] = [];
  const add = (type: string, source: string) => sources.set(type, [...(sources.get(type) ?? []), source]);
  const recordNames = recordAggregateNames();
  const files = tsFiles(EVENTS_DIR, (dir) => path.relative(EVENTS_DIR, dir) === 'store').map(parse);
  if (files.length === 0) problems.push(`no module files under ${EVENTS_DIR}`);

  for (const file of files) {
    const suffixes: { suffix: string; at: string }[] = [];
    /** Exported constants whose values are all PascalCase names: candidate prefixes of template types. */
    const prefixTables: { name: string; values: string[] }[] = [];
    const declaredInterfaces = new Set<string>();

    visit(file, (node) => {
      if (ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) declaredInterfaces.add(node.name.text);

      if (ts.isVariableStatement(node) && node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
        for (const declaration of node.declarationList.declarations) {
          if (!ts.isIdentifier(declaration.name) || !declaration.initializer) continue;
          const values = literalValues(declaration.initializer);
          if (!values || values.length === 0 || !values.every((v) => PASCAL.test(v))) continue;
          if (/_EVENTS$/.test(declaration.name.text)) {
            for (const v of values) add(v, `${where(file, declaration)} ${declaration.name.text}`);
          } else {
            prefixTables.push({ name: declaration.name.text, values });
          }
        }
      }

      if (!ts.isTypeReferenceNode(node) || !ts.isIdentifier(node.typeName)) return;
      const kind = node.typeName.text;
      if (kind !== 'DomainEvent' && kind !== 'RecordEvent') return;
      const first = node.typeArguments?.[0];
      if (!first) {
        problems.push(`${where(file, node)}: ${kind} without a type argument`);
        return;
      }
      if (kind === 'RecordEvent') {
        const fields = ts.isTypeReferenceNode(first) && ts.isIdentifier(first.typeName) ? first.typeName.text : null;
        // `RecordEvent<XFields, 'Name'>` names its record; `RecordEvent<XFields>` is found through recordAggregate.
        const second = node.typeArguments?.[1];
        const named = second && ts.isLiteralTypeNode(second) && ts.isStringLiteral(second.literal) ? second.literal.text : undefined;
        const name = named ?? (fields ? recordNames.get(fields) : undefined);
        if (!name) {
          problems.push(`${where(file, node)}: RecordEvent<${first.getText(file)}> has no recordAggregate<${first.getText(file)}>('Name', …) in src/commands`);
          return;
        }
        for (const suffix of RECORD_SUFFIXES) add(`${name}${suffix}`, `${where(file, node)} RecordEvent<${fields}>`);
        return;
      }
      const names = literalNames(first);
      if (names) {
        for (const name of names) add(name, where(file, node));
        return;
      }
      // The generic definition itself (`DomainEvent<\`${Name}Created\`, …>` inside `type RecordEvent<F, Name>`) declares no type.
      if (ts.isTemplateLiteralTypeNode(first) && referencesTypeParameter(first, node)) return;
      const suffix = templateSuffix(first);
      if (suffix) {
        suffixes.push({ suffix, at: where(file, node) });
        return;
      }
      problems.push(`${where(file, node)}: cannot read the event type of DomainEvent<${first.getText(file)}, …>`);
    });

    // Records of this file built with recordAggregate: their events count even where no type names them.
    for (const [fields, name] of recordNames) {
      if (!declaredInterfaces.has(fields)) continue;
      for (const suffix of RECORD_SUFFIXES) add(`${name}${suffix}`, `${path.relative(ROOT, file.fileName)} recordAggregate<${fields}>`);
    }

    if (suffixes.length) {
      if (prefixTables.length !== 1) {
        problems.push(
          `${suffixes[0].at}: event types \`\${string}${suffixes[0].suffix}\` need exactly one exported constant of PascalCase prefixes in the file, found ${prefixTables.length}` +
            (prefixTables.length ? ` (${prefixTables.map((t) => t.name).join(', ')})` : ''),
        );
      } else {
        for (const { suffix, at } of suffixes) for (const prefix of prefixTables[0].values) add(`${prefix}${suffix}`, `${at} ${prefixTables[0].name}`);
      }
    }
  }
  return { types: [...sources.keys()].sort(), sources, problems };
}

/** Whether a template literal type uses a type parameter of a declaration around it (a generic, not a name). */
function referencesTypeParameter(template: ts.TemplateLiteralTypeNode, from: ts.Node): boolean {
  const parameters = new Set<string>();
  for (let at: ts.Node | undefined = from; at; at = at.parent) {
    if (ts.isTypeAliasDeclaration(at) || ts.isInterfaceDeclaration(at)) for (const p of at.typeParameters ?? []) parameters.add(p.name.text);
  }
  return template.templateSpans.some((span) => ts.isTypeReferenceNode(span.type) && ts.isIdentifier(span.type.typeName) && parameters.has(span.type.typeName.text));
}
