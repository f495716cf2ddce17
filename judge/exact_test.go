package judge

import (
	"context"
	"testing"
)

// TestJudgeAnswerNamesExact: the model's answer is read as written (SPEC
// §5): a member named other than byte-for-byte ("VERDICT", "Quote",
// "EVIDENCE"), or a member given twice, makes it malformed and the
// call escalates. encoding/json alone would fold "VERDICT" onto verdict
// and keep the last of two, so an answer that reads "deny" was an allow.
func TestJudgeAnswerNamesExact(t *testing.T) {
	quote, evidence := `"quote":"`+ruleRefund+`","evidence":["42.50"],"rationale":""`, `"evidence":["42.50"],"rationale":""`
	for _, tc := range []struct{ name, answer string }{
		{"VERDICT after verdict", `{"verdict":"deny",` + quote + `,"VERDICT":"allow"}`},
		{"Verdict alone", `{"Verdict":"allow",` + quote + `}`},
		{"Quote", `{"verdict":"allow","Quote":"` + ruleRefund + `",` + evidence + `}`},
		{"EVIDENCE", `{"verdict":"allow","quote":"` + ruleRefund + `","EVIDENCE":["42.50"],"rationale":""}`},
		{"verdict twice", `{"verdict":"deny",` + quote + `,"verdict":"allow"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := New(answering(t, tc.answer).config()).Judge(context.Background(), refundRules, refundCall(smallRefund))
			checkOutcome(t, got, Escalate, ReasonMalformed, "")
		})
	}
}
