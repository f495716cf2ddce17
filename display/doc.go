// Package display owns how agent-written text (tool names, arguments,
// reasons, notes) is shown to people outside the web inbox: Slack
// messages, webhook `format: slack`, decision-link pages and the CLI
// (SPEC §10, "What people see outside the inbox is as safe as the inbox").
// The inbox's own JavaScript (httpapi/inbox/assets/text.js) applies the
// same rules with the same table; testdata/vectors.json holds the cases
// both must agree on.
//
// The rules, in order:
//   - invalid UTF-8 becomes U+FFFD;
//   - hidden characters are shown as escapes, never rendered: controls
//     (Cc), format characters (Cf: bidi controls, zero-width spaces and
//     joiners, tags), surrogates, private use, unassigned code points, line
//     and paragraph separators, every space but U+0020, variation
//     selectors, U+034F and the invisible Hangul fillers. An escape is
//     \u202E (four upper-case hex digits), \u{E0041} above the BMP; in
//     prose a line break stays one;
//   - look-alikes are flagged: a word (a run of letters, marks and
//     digits) that is not ASCII but whose Unicode TR39 skeleton is ASCII
//     ("pаypal" with a Cyrillic а, the all-Cyrillic "раураӏ", fullwidth or
//     mathematical letters) is shown as ⚠word(≈skeleton).
//
// The skeleton table ([Prototypes]) is generated from Unicode's
// confusables.txt (see prototypes.go); it holds every letter, mark or
// digit outside ASCII whose skeleton is ASCII.
//
// display has no I/O and no state; everything it returns is plain text
// for the surface to escape for its own markup (HTML, Slack mrkdwn).
package display
