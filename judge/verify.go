package judge

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// answer is the model's parsed answer. All of it is untrusted.
type answer struct {
	Verdict   Verdict
	Quote     string
	Evidence  []string
	Rationale string
}

// rawAnswer tells a missing field (nil) from an empty one.
type rawAnswer struct {
	Verdict   *string   `json:"verdict"`
	Quote     *string   `json:"quote"`
	Evidence  *[]string `json:"evidence"`
	Rationale *string   `json:"rationale"`
}

// parseAnswer parses text strictly as one answer object whose verdict is one
// of verdicts: unknown fields (names byte-for-byte), a member given twice,
// a missing or null field, an unknown verdict,
// trailing data or truncated JSON return ErrMalformed. One ```json fence
// around the object is tolerated.
func parseAnswer(text string, verdicts ...Verdict) (answer, error) {
	body := unfence(text)
	if err := exactMembers(body); err != nil {
		return answer{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	var raw rawAnswer
	if err := dec.Decode(&raw); err != nil {
		return answer{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return answer{}, fmt.Errorf("%w: data after the answer object", ErrMalformed)
	}
	if raw.Verdict == nil || raw.Quote == nil || raw.Evidence == nil || raw.Rationale == nil {
		return answer{}, fmt.Errorf("%w: missing field", ErrMalformed)
	}
	if !slices.Contains(verdicts, Verdict(*raw.Verdict)) {
		return answer{}, fmt.Errorf("%w: verdict %q", ErrMalformed, *raw.Verdict)
	}
	return answer{Verdict: Verdict(*raw.Verdict), Quote: *raw.Quote, Evidence: *raw.Evidence, Rationale: *raw.Rationale}, nil
}

// answerNames are rawAnswer's members.
var answerNames = map[string]bool{"verdict": true, "quote": true, "evidence": true, "rationale": true}

// exactMembers refuses an answer object with a member not named exactly as
// rawAnswer's, or given twice: encoding/json would fold "VERDICT" onto
// verdict and keep the last of two. Anything but an object is left for the
// decoder to refuse.
func exactMembers(body string) error {
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		name, _ := tok.(string)
		switch {
		case err != nil:
			return nil
		case !answerNames[name]:
			return fmt.Errorf("unknown field %q", name)
		case seen[name]:
			return fmt.Errorf("%q given twice", name)
		}
		seen[name] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil
		}
	}
	return nil
}

// unfence removes one Markdown code fence (``` or ```json) around s.
func unfence(s string) string {
	s = strings.TrimSpace(s)
	body, ok := strings.CutPrefix(s, "```")
	if !ok {
		return s
	}
	body, ok = strings.CutSuffix(body, "```")
	lang, inner, found := strings.Cut(body, "\n")
	if !ok || !found || (strings.TrimSpace(lang) != "" && !strings.EqualFold(strings.TrimSpace(lang), "json")) {
		return s
	}
	return inner
}

// verify checks an allow or deny answer against the rules and the call's
// arguments. It returns the matched rule and ReasonVerified, or the failure
// Reason: invalid_quote, wrong_effect or bad_evidence.
func verify(a answer, rules []Rule, args json.RawMessage) (Rule, string) {
	rule, reason := matchRule(rules, a.Quote, a.Verdict)
	if reason != ReasonVerified {
		return Rule{}, reason
	}
	if !evidenceFound(a.Evidence, argumentValues(args)) {
		return Rule{}, ReasonBadEvidence
	}
	return rule, ReasonVerified
}

// matchRule finds the rule whose whole text equals quote after whitespace
// folding and whose effect fits v. Among rules with the same text it takes
// the first that fits.
func matchRule(rules []Rule, quote string, v Verdict) (Rule, string) {
	q := foldSpace(quote)
	if q == "" {
		return Rule{}, ReasonInvalidQuote
	}
	reason := ReasonInvalidQuote
	for _, r := range rules {
		if foldSpace(r.Text) != q {
			continue
		}
		if r.Effect == "" || r.Effect == string(v) {
			return r, ReasonVerified
		}
		reason = ReasonWrongEffect
	}
	return Rule{}, reason
}

// foldSpace collapses runs of Unicode whitespace to one space and trims.
func foldSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// evidenceFound reports whether evidence is non-empty and each item is a
// non-blank substring of at least one argument value.
func evidenceFound(evidence, values []string) bool {
	if len(evidence) == 0 {
		return false
	}
	for _, e := range evidence {
		if strings.TrimSpace(e) == "" || !slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, e) }) {
			return false
		}
	}
	return true
}

// argumentValues lists the scalar values in the arguments JSON: strings as
// decoded, numbers exactly as written, booleans as "true"/"false". Keys and
// nulls are not values. Invalid JSON has no values.
func argumentValues(args json.RawMessage) []string {
	if !json.Valid(args) {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	var out []string
	collectValues(v, &out)
	return out
}

func collectValues(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case json.Number:
		*out = append(*out, x.String())
	case bool:
		*out = append(*out, strconv.FormatBool(x))
	case []any:
		for _, e := range x {
			collectValues(e, out)
		}
	case map[string]any:
		for _, e := range x {
			collectValues(e, out)
		}
	}
}
