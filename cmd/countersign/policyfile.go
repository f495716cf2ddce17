package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/countersign/countersign/approvals/replay"
	"github.com/countersign/countersign/domain"
)

// replayFile replays an exported audit log read from f.log, twice (the
// history, then the requests), for f.tenant or the log's own tenant.
// Without the running config, backups are not compared.
func replayFile(ctx context.Context, yaml []byte, f *replayFlags) (replay.Report, error) {
	src := fileSource(f.log)
	tenant := domain.TenantID(f.tenant)
	if tenant == "" {
		var err error
		if tenant, err = logTenant(src); err != nil {
			return replay.Report{}, err
		}
	}
	in, err := replay.Candidate(yaml, tenant, f.since, time.Now())
	if err != nil {
		return replay.Report{}, err
	}
	return replay.Run(ctx, in, src)
}

// fileSource reads path's lines anew on each call.
func fileSource(path string) replay.Source {
	return func(fn func([]byte) error) error {
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		return eachLine(file, fn)
	}
}

// eachLine calls fn with each non-empty line of r (an audit export: one
// entry a line, up to 64 MiB).
func eachLine(r io.Reader, fn func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		if len(sc.Bytes()) == 0 {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}

// errFirst stops a read at the first line.
var errFirst = fmt.Errorf("first line read")

// logTenant is the tenant of the log's first entry.
func logTenant(src replay.Source) (domain.TenantID, error) {
	var tenant domain.TenantID
	err := src(func(line []byte) error {
		var e struct{ Tenant domain.TenantID }
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("the log's first line is no entry: %w", err)
		}
		tenant = e.Tenant
		return errFirst
	})
	if err != nil && err != errFirst {
		return "", err
	}
	if tenant == "" {
		return "", fmt.Errorf("the log is empty: give --tenant")
	}
	return tenant, nil
}
