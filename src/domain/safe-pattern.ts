/**
 * Patterns that administrators write (a custom field's `validation.pattern`), matched in
 * time linear in the text: the pattern is parsed into a small regular-expression syntax
 * tree and run as a Thompson automaton (every state at once, one pass over the text), so
 * no pattern can backtrack for ever, whatever it nests (`(a+)+$`, `(a|a)*b`, `\d*\d*\d*x`).
 *
 * The syntax is the JavaScript one (what the web client's form checks with `new RegExp(p).test(v)`,
 * no flags), minus what needs backtracking: back-references and lookaround are refused. A match
 * is what `test` answers (anywhere in the text unless anchored), so client and service agree.
 */

/** Longest pattern accepted. */
export const PATTERN_MAX_LENGTH = 200;
/** Automaton states a pattern may compile to (counted repetitions multiply them). */
const MAX_STATES = 1_000;
/** Largest bound of a counted repetition `{n,m}`. */
const MAX_REPEAT = 100;

type CharTest = (unit: number) => boolean;
type Assertion = 'start' | 'end' | 'word' | 'not_word';
type Node =
  | { kind: 'char'; test: CharTest }
  | { kind: 'assert'; assertion: Assertion }
  | { kind: 'seq'; items: Node[] }
  | { kind: 'alt'; options: Node[] }
  | { kind: 'repeat'; body: Node; min: number; max: number };

type State =
  | { kind: 'char'; test: CharTest; next: number }
  | { kind: 'split'; a: number; b: number }
  | { kind: 'assert'; assertion: Assertion; next: number }
  | { kind: 'match' };

export type SafePattern = { ok: true; test: (text: string) => boolean } | { ok: false; problem: string };

class Refused extends Error {}

const ranges = (list: [number, number][], negated = false): CharTest => {
  return (unit) => {
    let inside = false;
    for (const [lo, hi] of list) {
      if (unit >= lo && unit <= hi) {
        inside = true;
        break;
      }
    }
    return inside !== negated;
  };
};
const code = (c: string) => c.charCodeAt(0);
const DIGIT: [number, number][] = [[48, 57]];
const WORD: [number, number][] = [[48, 57], [65, 90], [95, 95], [97, 122]];
// JavaScript's WhiteSpace and LineTerminator code points.
const SPACE: [number, number][] = [[9, 13], [32, 32], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a], [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const LINE_TERMINATORS: [number, number][] = [[10, 10], [13, 13], [0x2028, 0x2029]];
const isWordUnit = ranges(WORD);

/** A class escape's ranges (`\d`, `\w`, `\s` and their negations), or null. */
function classEscape(letter: string): { list: [number, number][]; negated: boolean } | null {
  switch (letter) {
    case 'd': return { list: DIGIT, negated: false };
    case 'D': return { list: DIGIT, negated: true };
    case 'w': return { list: WORD, negated: false };
    case 'W': return { list: WORD, negated: true };
    case 's': return { list: SPACE, negated: false };
    case 'S': return { list: SPACE, negated: true };
    default: return null;
  }
}

/** Recursive descent over the JavaScript pattern syntax (Annex B, no flags), refusing what needs backtracking. */
class Parser {
  private at = 0;
  constructor(private readonly source: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.source.length) throw new Refused(`unexpected "${this.source[this.at]}"`);
    return node;
  }

  private peek(offset = 0) {
    return this.source[this.at + offset];
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alt', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.source.length && this.peek() !== '|' && this.peek() !== ')') items.push(this.term());
    return { kind: 'seq', items };
  }

  private term(): Node {
    const atom = this.atom();
    const bounds = this.quantifier();
    if (!bounds) return atom;
    if (atom.kind === 'assert') throw new Refused('an anchor or word boundary cannot be repeated');
    return { kind: 'repeat', body: atom, ...bounds };
  }

  private quantifier(): { min: number; max: number } | null {
    const c = this.peek();
    let bounds: { min: number; max: number } | null = null;
    if (c === '*') bounds = { min: 0, max: Infinity };
    else if (c === '+') bounds = { min: 1, max: Infinity };
    else if (c === '?') bounds = { min: 0, max: 1 };
    if (bounds) this.at++;
    else if (c === '{') {
      const counted = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.source.slice(this.at));
      // Annex B: a brace that does not make a quantifier is a literal.
      if (!counted) return null;
      const min = Number(counted[1]);
      const max = counted[2] ? (counted[3] ? Number(counted[3]) : Infinity) : min;
      if (min > MAX_REPEAT || (max !== Infinity && max > MAX_REPEAT)) throw new Refused(`a counted repetition may go up to ${MAX_REPEAT}`);
      this.at += counted[0].length;
      bounds = { min, max };
    }
    // A lazy quantifier matches the same texts: only `test` is asked.
    if (bounds && this.peek() === '?') this.at++;
    return bounds;
  }

  private atom(): Node {
    const c = this.source[this.at++];
    switch (c) {
      case '^': return { kind: 'assert', assertion: 'start' };
      case '$': return { kind: 'assert', assertion: 'end' };
      case '.': return { kind: 'char', test: ranges(LINE_TERMINATORS, true) };
      case '[': return this.characterClass();
      case '(': return this.group();
      case '\\': return this.escape();
      default: {
        const unit = code(c);
        return { kind: 'char', test: (u) => u === unit };
      }
    }
  }

  private group(): Node {
    if (this.peek() === '?') {
      const next = this.peek(1);
      if (next === ':') this.at += 2;
      else if (next === '<' && /^<[A-Za-z_$][\w$]*>/.test(this.source.slice(this.at + 1))) this.at = this.source.indexOf('>', this.at) + 1;
      else throw new Refused('lookahead and lookbehind are not supported');
    }
    const inner = this.alternation();
    if (this.peek() !== ')') throw new Refused('a group is not closed');
    this.at++;
    return inner;
  }

  private escape(): Node {
    const letter = this.source[this.at++];
    if (letter === undefined) throw new Refused('the pattern ends with a backslash');
    if (letter === 'b') return { kind: 'assert', assertion: 'word' };
    if (letter === 'B') return { kind: 'assert', assertion: 'not_word' };
    if (/[1-9]/.test(letter) || letter === 'k') throw new Refused('back-references are not supported');
    const set = classEscape(letter);
    if (set) return { kind: 'char', test: ranges(set.list, set.negated) };
    const unit = this.escapedUnit(letter);
    return { kind: 'char', test: (u) => u === unit };
  }

  /** The code unit of a character escape whose letter was just read (`\n`, `\x41`, `\u0041`, `\cJ`, `\.`). */
  private escapedUnit(letter: string): number {
    const simple: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13, '0': 0 };
    if (letter === '0' && /[0-9]/.test(this.peek() ?? '')) throw new Refused('octal escapes are not supported');
    if (letter in simple) return simple[letter];
    const hex = (length: number) => {
      const digits = this.source.slice(this.at, this.at + length);
      if (!new RegExp(`^[0-9A-Fa-f]{${length}}$`).test(digits)) return null;
      this.at += length;
      return parseInt(digits, 16);
    };
    if (letter === 'x') return hex(2) ?? code('x');
    if (letter === 'u') {
      if (this.peek() === '{') throw new Refused('\\u{…} escapes need the u flag');
      return hex(4) ?? code('u');
    }
    if (letter === 'c') {
      if (!/[A-Za-z]/.test(this.peek() ?? '')) throw new Refused('\\c must be followed by a letter');
      return code(this.source[this.at++]) % 32;
    }
    return code(letter);
  }

  private characterClass(): Node {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const list: [number, number][] = [];
    const tests: CharTest[] = [];
    // `[]` matches nothing and `[^]` anything, as in JavaScript (a `]` first is not a literal there).
    while (this.peek() !== ']') {
      if (this.at >= this.source.length) throw new Refused('a character class is not closed');
      const from = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined && typeof from === 'number') {
        this.at++;
        const to = this.classAtom();
        if (typeof to !== 'number') {
          // `[a-\d]`: the hyphen is literal (Annex B).
          list.push([from, from], [45, 45]);
          tests.push(to);
          continue;
        }
        if (to < from) throw new Refused('a character range is out of order');
        list.push([from, to]);
        continue;
      }
      if (typeof from === 'number') list.push([from, from]);
      else tests.push(from);
    }
    this.at++;
    const inList = ranges(list);
    return { kind: 'char', test: (u) => (inList(u) || tests.some((t) => t(u))) !== negated };
  }

  /** One member of a class: a code unit, or a class escape's test. */
  private classAtom(): number | CharTest {
    const c = this.source[this.at++];
    if (c !== '\\') return code(c);
    const letter = this.source[this.at++];
    if (letter === undefined) throw new Refused('the pattern ends with a backslash');
    if (letter === 'b') return 8;
    if (letter === '-') return 45;
    const set = classEscape(letter);
    if (set) return ranges(set.list, set.negated);
    if (/[1-9]/.test(letter)) throw new Refused('octal escapes are not supported');
    return this.escapedUnit(letter);
  }
}

/** Thompson construction, built backwards from each node's continuation. */
function compile(root: Node): { states: State[]; start: number } {
  const states: State[] = [];
  const add = (state: State) => {
    if (states.length >= MAX_STATES) throw new Refused('the pattern is too complex (too many repetitions)');
    states.push(state);
    return states.length - 1;
  };
  const build = (node: Node, next: number): number => {
    switch (node.kind) {
      case 'char': return add({ kind: 'char', test: node.test, next });
      case 'assert': return add({ kind: 'assert', assertion: node.assertion, next });
      case 'seq': return node.items.reduceRight((tail, item) => build(item, tail), next);
      case 'alt': return node.options.map((option) => build(option, next)).reduce((others, option) => add({ kind: 'split', a: option, b: others }));
      case 'repeat': {
        let tail = next;
        if (node.max === Infinity) {
          const loop = add({ kind: 'split', a: -1, b: next });
          (states[loop] as { a: number }).a = build(node.body, loop);
          tail = loop;
        } else {
          // x{0,k} has the texts of x?x?…x? (k times): only `test` is asked, never a capture.
          for (let i = node.min; i < node.max; i++) tail = add({ kind: 'split', a: build(node.body, tail), b: tail });
        }
        for (let i = 0; i < node.min; i++) tail = build(node.body, tail);
        return tail;
      }
    }
  };
  const match = add({ kind: 'match' });
  return { states, start: build(root, match) };
}

/** Runs the automaton over `text`: every live state advances together, so the time is O(text × states). */
function run({ states, start }: { states: State[]; start: number }, text: string): boolean {
  const marks = new Int32Array(states.length).fill(-1);
  let generation = 0;
  const holds = (assertion: Assertion, at: number) => {
    if (assertion === 'start') return at === 0;
    if (assertion === 'end') return at === text.length;
    const boundary = (at > 0 && isWordUnit(text.charCodeAt(at - 1))) !== (at < text.length && isWordUnit(text.charCodeAt(at)));
    return assertion === 'word' ? boundary : !boundary;
  };
  /** Adds `from` and every state reachable without reading a unit, at position `at`; true when the match state is reached. */
  const close = (list: number[], from: number, at: number): boolean => {
    const stack = [from];
    let matched = false;
    while (stack.length) {
      const index = stack.pop()!;
      if (marks[index] === generation) continue;
      marks[index] = generation;
      const state = states[index];
      if (state.kind === 'match') matched = true;
      else if (state.kind === 'char') list.push(index);
      else if (state.kind === 'split') stack.push(state.b, state.a);
      else if (holds(state.assertion, at)) stack.push(state.next);
    }
    return matched;
  };
  let current: number[] = [];
  for (let at = 0; ; at++) {
    // Unanchored, as `test` is: a match may start at every position.
    if (close(current, start, at)) return true;
    if (at === text.length) return false;
    const unit = text.charCodeAt(at);
    const next: number[] = [];
    generation++;
    for (const index of current) {
      const state = states[index] as Extract<State, { kind: 'char' }>;
      if (state.test(unit) && close(next, state.next, at + 1)) return true;
    }
    current = next;
  }
}

/** The pattern checked and compiled, or the reason it is refused (a sentence an administrator can act on). */
export function compileSafePattern(pattern: string): SafePattern {
  if (pattern.length > PATTERN_MAX_LENGTH) return { ok: false, problem: `a pattern may be at most ${PATTERN_MAX_LENGTH} characters long` };
  try {
    // What the web client will run: it must compile there too.
    new RegExp(pattern);
  } catch {
    return { ok: false, problem: 'not a valid regular expression' };
  }
  try {
    const program = compile(new Parser(pattern).parse());
    return { ok: true, test: (text) => run(program, text) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, problem: error.message };
    throw error;
  }
}

const compiled = new Map<string, SafePattern>();

/** `compileSafePattern`, remembered for the most recent 500 patterns (definitions are read on every record write). */
export function safePattern(pattern: string): SafePattern {
  let found = compiled.get(pattern);
  if (found) {
    compiled.delete(pattern);
  } else {
    found = compileSafePattern(pattern);
    if (compiled.size >= 500) compiled.delete(compiled.keys().next().value!);
  }
  compiled.set(pattern, found);
  return found;
}
