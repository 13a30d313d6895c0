package worker

import (
	"context"
	"log/slog"
	"time"

	"gateway/store"
)

// NameIndexerConfig configures NewNameIndexer. Zero fields take the documented defaults.
type NameIndexerConfig struct {
	// Interval is the time between passes; the first pass is at Start. Default 1 s.
	Interval time.Duration
	// Batch is the most contacts one transaction indexes. Default 2,000 (about 34,000 suffix
	// rows: a short transaction, so a rename of one of them waits briefly).
	Batch int
	// Logger receives the service's logs. Nil means slog.Default().
	Logger *slog.Logger
}

// Defaults of NameIndexerConfig.
const (
	DefaultNameIndexInterval = time.Second
	DefaultNameIndexBatch    = 2000
)

// nameIndexPassTimeout bounds one pass; the next pass goes on where it stopped.
const nameIndexPassTimeout = 5 * time.Minute

// nameIndexAccounts is how many accounts with a backlog one pass takes.
const nameIndexAccounts = 100

// NameIndexer puts the contacts of large imports into the name search's index after their
// import (store.IndexContactNames): each pass takes the accounts with a backlog and indexes each
// one's contacts batch by batch until none is left. Every replica runs it; a batch skips the
// contacts another replica's batch holds. Create it with NewNameIndexer; it is a Service.
type NameIndexer struct {
	cfg   NameIndexerConfig
	store *store.Store
	log   *slog.Logger

	periodic
}

// NewNameIndexer returns the name indexer over st. It starts nothing and cannot fail.
func NewNameIndexer(st *store.Store, cfg NameIndexerConfig) *NameIndexer {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultNameIndexInterval
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultNameIndexBatch
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	n := &NameIndexer{cfg: cfg, store: st, log: cfg.Logger.With("service", "name_indexer")}
	n.periodic = periodic{interval: cfg.Interval, timeout: nameIndexPassTimeout, pass: n.run,
		lifecycle: lifecycle{lcName: "name indexer"}}
	return n
}

// run is one pass: every account with a backlog, drained.
func (n *NameIndexer) run(ctx, loop context.Context) {
	accounts, err := n.store.NameBacklogAccounts(ctx, nameIndexAccounts)
	if err != nil {
		if loop.Err() == nil {
			n.log.Error("name index backlog", "error", err.Error())
		}
		return
	}
	for _, account := range accounts {
		indexed, err := n.Drain(ctx, account)
		if err != nil && loop.Err() == nil {
			n.log.Error("name index", "account", account, "indexed", indexed, "error", err.Error())
		}
		if indexed > 0 {
			n.log.Info("contacts added to name search", "account", account, "contacts", indexed)
		}
	}
}

// Drain indexes the account's backlog batch by batch until it is empty (or held by another
// replica) or ctx ends, and returns how many backlogged contacts it took.
func (n *NameIndexer) Drain(ctx context.Context, accountID int64) (int, error) {
	total := 0
	for ctx.Err() == nil {
		k, err := n.store.IndexContactNames(ctx, accountID, n.cfg.Batch)
		total += k
		if err != nil || k == 0 {
			return total, err
		}
	}
	return total, ctx.Err()
}
