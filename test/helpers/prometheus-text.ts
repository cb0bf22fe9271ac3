/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4), for the tests of
 * `GET /metrics`. It throws on anything a Prometheus server would refuse or misread: a malformed
 * line, a sample before its family's `# TYPE`, a family split in two, a repeated series, a
 * histogram whose buckets are unsorted, not cumulative, lack `+Inf`, or disagree with `_count`.
 *
 * Beside it every scrape is also read by a published parser (`parse-prometheus-text-format`),
 * which must find the same families; that one is lenient, so the strictness stays here.
 */

export interface Sample {
  /** The sample's own name (`http_request_duration_seconds_bucket`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string | undefined;
  samples: Sample[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const HELP = new RegExp(`^# HELP (${NAME}) (.*)$`);
const TYPE = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`);
const SAMPLE_NAME = new RegExp(`^(${NAME})`);
/** A float as Go's ParseFloat reads it (the format's definition): NaN and Inf in any case. */
const VALUE = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|nan|[+-]?inf(?:inity)?)$/i;
const TIMESTAMP = /^-?\d+$/;

/** The family a sample belongs to: a histogram's `_bucket`, `_sum`, `_count` belong to its name. */
function familyOf(sampleName: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const own = families.get(sampleName);
  if (own) return own;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!sampleName.endsWith(suffix)) continue;
    const family = families.get(sampleName.slice(0, -suffix.length));
    if (family && (family.type === 'histogram' || (family.type === 'summary' && suffix !== '_bucket'))) return family;
  }
  return undefined;
}

function parseValue(text: string, line: string): number {
  if (!VALUE.test(text)) throw new Error(`not a sample value: ${JSON.stringify(text)} in ${JSON.stringify(line)}`);
  const word = text.toLowerCase();
  if (word === 'nan') return Number.NaN;
  if (/^\+?inf/.test(word)) return Number.POSITIVE_INFINITY;
  if (word.startsWith('-inf')) return Number.NEGATIVE_INFINITY;
  return Number(text);
}

/** `{a="x",b="y\"z"}` from `start` (the `{`); returns the labels and the index after `}`. */
function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = start + 1;
  const fail = (why: string): never => {
    throw new Error(`${why} at column ${i} of ${JSON.stringify(line)}`);
  };
  while (i < line.length && line[i] !== '}') {
    const equals = line.indexOf('=', i);
    if (equals < 0) fail('a label without "="');
    const name = line.slice(i, equals);
    if (!LABEL_NAME.test(name)) fail(`a bad label name ${JSON.stringify(name)}`);
    if (name in labels) fail(`label ${name} repeated`);
    i = equals + 1;
    if (line[i] !== '"') fail('a label value not in double quotes');
    i++;
    let value = '';
    for (;;) {
      const c = line[i];
      if (c === undefined) fail('an unterminated label value');
      if (c === '"') break;
      if (c === '\\') {
        const escaped = line[i + 1];
        if (escaped === '\\') value += '\\';
        else if (escaped === '"') value += '"';
        else if (escaped === 'n') value += '\n';
        else fail('a bad escape in a label value');
        i += 2;
        continue;
      }
      value += c;
      i++;
    }
    labels[name] = value;
    i++;
    if (line[i] === ',') i++;
    else if (line[i] !== '}') fail('"," or "}" expected after a label');
  }
  if (line[i] !== '}') fail('an unterminated label set');
  return { labels, end: i + 1 };
}

function seriesKey(name: string, labels: Record<string, string>): string {
  return `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;
}

/** Reads a whole exposition; throws naming the first thing wrong. */
export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the exposition must end with a line feed');
  const families = new Map<string, MetricFamily>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: MetricFamily | undefined;
  const enter = (family: MetricFamily) => {
    if (current !== family) {
      if (closed.has(family.name)) throw new Error(`the lines of ${family.name} are not together`);
      if (current) closed.add(current.name);
      current = family;
    }
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const help = HELP.exec(line);
      const type = TYPE.exec(line);
      if (help) {
        const [, name = ''] = help;
        let family = families.get(name);
        if (family?.help !== undefined) throw new Error(`a second HELP for ${name}`);
        if (!family) {
          family = { name, type: 'untyped', help: undefined, samples: [] };
          families.set(name, family);
        }
        enter(family);
        family.help = help[2];
      } else if (type) {
        const [, name = '', kind] = type;
        const family = families.get(name) ?? { name, type: 'untyped' as const, help: undefined, samples: [] };
        if (family.samples.length > 0) throw new Error(`TYPE of ${name} after its samples`);
        if (families.has(name) && family.type !== 'untyped') throw new Error(`a second TYPE for ${name}`);
        family.type = kind as MetricFamily['type'];
        families.set(name, family);
        enter(family);
      } else if (/^# (HELP|TYPE)\b/.test(line)) {
        throw new Error(`a malformed ${line.slice(2, 6)} line: ${JSON.stringify(line)}`);
      }
      continue;
    }
    const nameMatch = SAMPLE_NAME.exec(line);
    if (!nameMatch?.[1]) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const name = nameMatch[1];
    let rest = name.length;
    let labels: Record<string, string> = {};
    if (line[rest] === '{') ({ labels, end: rest } = parseLabels(line, rest));
    if (line[rest] !== ' ') throw new Error(`a space expected before the value in ${JSON.stringify(line)}`);
    const fields = line.slice(rest + 1).split(' ');
    if (fields.length > 2 || fields.some((f) => f === '')) throw new Error(`a value and an optional timestamp expected in ${JSON.stringify(line)}`);
    const value = parseValue(fields[0] ?? '', line);
    if (fields[1] !== undefined && !TIMESTAMP.test(fields[1])) throw new Error(`a bad timestamp in ${JSON.stringify(line)}`);
    let family = familyOf(name, families);
    if (!family) {
      family = { name, type: 'untyped', help: undefined, samples: [] };
      families.set(name, family);
    }
    enter(family);
    const key = seriesKey(name, labels);
    if (series.has(key)) throw new Error(`series ${key} repeated`);
    series.add(key);
    if (family.type === 'histogram' && name.endsWith('_bucket') && labels.le === undefined) throw new Error(`a bucket without le: ${JSON.stringify(line)}`);
    family.samples.push({ name, labels, value });
  }
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** Each label set's buckets: sorted by `le`, cumulative, ending at `+Inf` equal to `_count`. */
function checkHistogram(family: MetricFamily): void {
  const groups = new Map<string, { buckets: { le: number; value: number }[]; count?: number; sum?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = seriesKey('', rest);
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name === `${family.name}_bucket`) group.buckets.push({ le: parseValue(le ?? '', `le of ${family.name}`), value: sample.value });
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else throw new Error(`${sample.name} in histogram ${family.name}`);
  }
  for (const [key, group] of groups) {
    const where = `${family.name}${key}`;
    const last = group.buckets.at(-1);
    if (last?.le !== Number.POSITIVE_INFINITY) throw new Error(`${where}: no +Inf bucket last`);
    if (group.count === undefined || group.sum === undefined) throw new Error(`${where}: _count or _sum missing`);
    if (last.value !== group.count) throw new Error(`${where}: +Inf bucket ${last.value} but _count ${group.count}`);
    for (let i = 1; i < group.buckets.length; i++) {
      const [before, after] = [group.buckets[i - 1], group.buckets[i]];
      if (!before || !after || !(after.le > before.le)) throw new Error(`${where}: buckets not in increasing order of le`);
      if (after.value < before.value) throw new Error(`${where}: buckets not cumulative`);
    }
  }
}
