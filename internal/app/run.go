package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"
)

// catchUpBudget bounds how long a stop waits for the request mirror to
// catch up with the last writes before its snapshot is saved.
const catchUpBudget = time.Second

// shutdownTimeout bounds Run's shutdown.
const shutdownTimeout = 30 * time.Second

// Run starts every worker New built and serves the HTTP and bus APIs,
// then blocks until ctx ends, Shutdown is called, a worker fails or the
// HTTP server stops serving; then it shuts the process down and returns
// once every worker has returned and NATS is closed. Started is closed
// once everything serves.
//
// The workers run on a context that carries ctx's values and ends just
// after the HTTP server has drained (bounded by 30 s), so that a request
// in flight when ctx ends finishes against live workers. Run returns nil
// when ctx ended (or Shutdown asked) and the shutdown was clean, also
// when that was before the start had finished; otherwise the failure that
// stopped it (a worker's error as that worker returned it), joined with
// the shutdown's error, if any. Run may be called once.
func (a *App) Run(ctx context.Context) error {
	if !a.running.CompareAndSwap(false, true) {
		return errors.New("app: Run called twice, or after Shutdown")
	}
	defer close(a.done)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // Shutdown ends the run as ctx would
		select {
		case <-a.quit:
			stop()
		case <-rctx.Done():
		}
	}()
	base, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	g, wctx := errgroup.WithContext(base)
	for _, w := range a.workers {
		g.Go(func() error { return w(wctx) })
	}
	cause := a.begin(rctx, wctx, g)
	switch {
	case cause == nil:
		close(a.up)
		cause = a.wait(rctx, wctx)
	case wctx.Err() != nil:
		cause = fmt.Errorf("app: a worker failed while starting: %w", context.Cause(wctx))
	case rctx.Err() != nil:
		cause = nil // stopped while starting: asked to
	}
	a.log.Info("shutting down", "cause", cause)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	a.runErr = errors.Join(cause, a.shutdown(sctx, stopWorkers, g))
	return a.runErr
}

// begin finishes the start once the workers run: the views catch up,
// stored delegations are brought under the current rules, the config is
// followed, tenant tokens are taken on the bus, and the APIs serve.
func (a *App) begin(ctx, wctx context.Context, g *errgroup.Group) error {
	ctx, cancel := context.WithCancel(ctx) // a worker that fails ends the start too
	defer cancel()
	defer context.AfterFunc(wctx, cancel)()
	if err := a.views.WaitReady(ctx); err != nil {
		return err
	}
	if _, err := a.Service.EndBarredDelegations(ctx); err != nil { // stored before authority was bound to one member
		return fmt.Errorf("app: end delegated work across members: %w", err)
	}
	if err := a.live.start(ctx, wctx, g); err != nil {
		return err
	}
	// Tenant tokens on the bus, checked like HTTP's: only once the views
	// are caught up, so that a good token is never refused while loading.
	if err := a.Broker.SetAuthenticator(a.views); err != nil {
		return err
	}
	if a.http == nil {
		a.started.Store(true)
		return nil
	}
	a.serving = true
	go func() { a.served <- a.http.Serve(a.ln) }()
	if err := a.bus.Listen(ctx); err != nil {
		return err
	}
	g.Go(func() error { return a.bus.Run(wctx) })
	a.started.Store(true)
	return nil
}

// wait returns nil when ctx ends, or the failure that ends the process
// first: a worker's error (the workers' context's cause) or the HTTP
// server's (left in served for shutdown).
func (a *App) wait(ctx, wctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-wctx.Done():
		return fmt.Errorf("app: a worker failed: %w", context.Cause(wctx))
	case err := <-a.served:
		a.served <- err
		return fmt.Errorf("app: the HTTP server stopped: %w", err)
	}
}

// Started is closed once Run has started everything: the workers run and
// the APIs serve. It is never closed when the start fails.
func (a *App) Started() <-chan struct{} { return a.up }

// shutdown stops accepting, answers held long-polls at once, lets
// in-flight requests finish (until ctx ends), stops the workers and
// closes NATS.
func (a *App) shutdown(ctx context.Context, stopWorkers context.CancelFunc, g *errgroup.Group) error {
	var err error
	if a.http != nil {
		a.Service.Hub().Close()
		a.api.Close()
		err = a.http.Shutdown(ctx)
		if a.serving && !errors.Is(<-a.served, http.ErrServerClosed) {
			err = errors.Join(err, errors.New("app: http server stopped early"))
		}
	}
	if a.ln != nil && !a.serving { // never served: Shutdown above left it open
		_ = a.ln.Close()
	}
	// The request mirror's snapshot, so that the next start need not
	// replay every request (a cache: a failure costs only that). Before
	// the workers (the watcher among them) stop, it catches up with the
	// last writes, for at most catchUpBudget.
	cctx, ccancel := context.WithTimeout(ctx, catchUpBudget)
	if cerr := a.views.Snapshots().CatchUp(cctx); cerr != nil {
		a.log.Info("snapshot: the mirror did not catch up before the stop; the next start replays the rest", "err", cerr)
	}
	ccancel()
	stopWorkers()
	if werr := g.Wait(); werr != nil && !errors.Is(werr, context.Canceled) {
		a.log.Warn("worker stopped with error", "err", werr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	if serr := a.views.Snapshots().Save(sctx); serr != nil {
		a.log.Warn("snapshot: not saved", "err", serr)
	}
	cancel()
	a.Broker.Close()
	return err
}

// Shutdown ends Run as ctx's end would, and waits (until ctx ends) for it
// to return; it returns Run's error. On an App never run, it closes what
// New opened. Safe to repeat.
func (a *App) Shutdown(ctx context.Context) error {
	a.quitOnce.Do(func() { close(a.quit) })
	if a.running.CompareAndSwap(false, true) { // never run: nothing but NATS and the port
		if a.ln != nil {
			_ = a.ln.Close()
		}
		a.Broker.Close()
		close(a.done)
		return nil
	}
	select {
	case <-a.done:
		return a.runErr
	case <-ctx.Done():
		return ctx.Err()
	}
}
