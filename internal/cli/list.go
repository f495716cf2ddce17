package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
)

// list follows every page of path and prints the items: as one
// {"items": [...]} with --json, else decoded as T in table.
func list[T any](ctx context.Context, s Session, path string, q url.Values, table func(io.Writer, []T)) error {
	items, err := s.Client.list(ctx, path, q)
	if err != nil {
		return err
	}
	if s.JSON {
		if items == nil {
			items = []json.RawMessage{}
		}
		return writeJSON(s.Out, page{Items: items})
	}
	out := make([]T, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i]); err != nil {
			return fmt.Errorf("the server sent an item countersign cannot read: %w", err)
		}
	}
	table(s.Out, out)
	return nil
}
