// Go durations ("1h30m", "45s", "1.5s"), as the server reads them.
const units: Record<string, number> = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration, or NaN when it does not parse. */
export function parseDuration(s: string): number {
  if (s === "0") return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;
  let i = 0, sign = 1, total = 0;
  if (s[0] === "-" || s[0] === "+") {
    sign = s[0] === "-" ? -1 : 1;
    i = 1;
  }
  if (i >= s.length) return NaN;
  while (i < s.length) {
    re.lastIndex = i;
    const m = re.exec(s);
    if (!m) return NaN;
    total += Number(m[1]) * units[m[2]!]!;
    i = re.lastIndex;
  }
  return sign * total;
}

/** A whole number of seconds as a Go duration. */
export function seconds(ms: number): string {
  return `${Math.floor(ms / 1000)}s`;
}
