package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/problem"
)

// A batch (SPEC §10 "Batch") is several pending requests of one
// capability whose arguments have the same keys, answered together: each
// is read, shown on one line, and answered with its own compare-and-set
// on the revision read, and each gets a result line. A batch of mixed
// capabilities or argument keys is refused before anything is answered.

// ErrBatchMixed refuses a batch that is not one capability with the same
// argument keys; nothing was answered.
var ErrBatchMixed = errors.New("a batch is several requests of one capability whose arguments have the same keys")

// batchItem is one request of a batch: as read, and what its answer did.
type batchItem struct {
	ID      string          `json:"id"`
	Applied bool            `json:"applied"`
	Request json.RawMessage `json:"request,omitempty"` // the record after the answer
	Error   string          `json:"error,omitempty"`   // why it did not apply

	before *domain.Request // nil: it could not be read
	result string          // the result line's text
}

// AnswerAll answers every request in ids the same way: one id is Answer;
// several are a batch. It returns an error when any answer did not apply
// (each one's result line says why), or ErrBatchMixed, having answered
// nothing.
func (s Session) AnswerAll(ctx context.Context, ids []string, in AnswerInput) error {
	if len(ids) == 1 {
		return s.Answer(ctx, ids[0], in)
	}
	if len(in.Arguments) > 0 {
		return errors.New("--arguments edits one request: give one id")
	}
	items := make([]*batchItem, len(ids))
	seen := map[string]bool{}
	for i, id := range ids {
		id = strings.TrimSpace(id)
		if seen[id] {
			return fmt.Errorf("%s is named twice; nothing was answered", cell(id))
		}
		seen[id] = true
		it := &batchItem{ID: id}
		var rec domain.Request
		if _, err := s.Client.get(ctx, apiPath("/v1/requests/", id), &rec); err != nil {
			it.Error, it.result = err.Error(), "not applied: "+whyNot(err)
		} else {
			it.before = &rec
		}
		items[i] = it
	}
	if err := sameShape(items); err != nil {
		return err
	}
	p := s.Client.people(ctx)
	if !s.JSON {
		s.showBatch(items, p)
	}
	applied := 0
	for _, it := range items {
		if it.before != nil {
			s.answerOne(ctx, it, in, p)
		}
		if it.Applied {
			applied++
		}
		if s.JSON {
			if err := writeJSON(s.Out, it); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(s.Out, "%s: %s\n", cell(it.ID), it.result)
	}
	if applied < len(items) {
		return fmt.Errorf("%d of %d answers applied; each line above that says \"not applied\" says why", applied, len(items))
	}
	if !s.JSON {
		fmt.Fprintf(s.Out, "All %d answers applied.\n", len(items))
	}
	return nil
}

// answerOne sends it's answer with the revision read as expected.
func (s Session) answerOne(ctx context.Context, it *batchItem, in AnswerInput, p people) {
	path := apiPath("/v1/requests/", it.ID)
	raw, err := s.Client.do(ctx, http.MethodPost, path, answerBody{Expected: it.before.Revision, AnswerInput: in})
	if err != nil {
		it.Error = err.Error()
		it.result = "not applied: " + whyNot(err)
		var pe *problem.Error
		if errors.As(err, &pe) && pe.Status == http.StatusConflict {
			it.result += " " + conflictHint(ctx, s.Client, path, it.before)
		}
		return
	}
	var after domain.Request
	if err := json.Unmarshal(raw, &after); err != nil {
		it.Error = "the server's answer is not a request record"
		it.result = "not known whether it applied: " + it.Error
		return
	}
	it.Applied, it.Request = true, raw
	it.result = "applied: " + p.outcome(it.before, &after)
}

// whyNot is a refusal in a few words, then the server's own.
func whyNot(err error) string {
	var pe *problem.Error
	if !errors.As(err, &pe) {
		return err.Error()
	}
	word := map[int]string{
		http.StatusNotFound: "not found", http.StatusConflict: "conflict", http.StatusForbidden: "not allowed",
		http.StatusUnauthorized: "not signed in", http.StatusGone: "gone", http.StatusBadRequest: "refused",
		http.StatusUnprocessableEntity: "refused", http.StatusTooManyRequests: "too many requests",
	}[pe.Status]
	if word == "" {
		word = fmt.Sprintf("HTTP %d", pe.Status)
	}
	return word + " (" + err.Error() + ")"
}

// sameShape refuses a batch whose readable requests are not of one
// capability with the same argument keys.
func sameShape(items []*batchItem) error {
	var first *batchItem
	var firstKeys []string
	for _, it := range items {
		if it.before == nil {
			continue
		}
		keys := argKeys(it.before.Arguments)
		if first == nil {
			first, firstKeys = it, keys
			continue
		}
		if it.before.Capability != first.before.Capability || !slices.Equal(keys, firstKeys) {
			return fmt.Errorf("%w: %s is %s with %s, %s is %s with %s; answer them separately (nothing was answered)", ErrBatchMixed,
				cell(first.ID), capability(first.before.Capability), keyList(firstKeys),
				cell(it.ID), capability(it.before.Capability), keyList(keys))
		}
	}
	return nil
}

// argKeys are the sorted keys of a JSON object; nil for anything else.
func argKeys(raw json.RawMessage) []string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func keyList(keys []string) string {
	if keys == nil {
		return "arguments that are not an object"
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = text(k, 40)
	}
	return "keys {" + strings.Join(parts, ", ") + "}"
}

// showBatch prints what is about to be answered, one line a request.
func (s Session) showBatch(items []*batchItem, p people) {
	var capab domain.Capability
	var keys []string
	for _, it := range items {
		if it.before != nil {
			capab, keys = it.before.Capability, argKeys(it.before.Arguments)
			break
		}
	}
	fmt.Fprintf(s.Out, "Answering %d requests of %s with %s:\n", len(items), capability(capab), keyList(keys))
	now := time.Now()
	for _, it := range items {
		if it.before == nil {
			fmt.Fprintf(s.Out, "  %s  cannot be read\n", cell(it.ID))
			continue
		}
		r := it.before
		fmt.Fprintf(s.Out, "  %s  %s  %s  revision %d, %s\n", cell(it.ID), cell(string(r.Agent)),
			text(string(r.Arguments), 100), r.Revision, p.statusLine(r, now))
	}
}
