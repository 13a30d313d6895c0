package bench

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"gateway/migrations"
	"time"

	"gateway/server/domain"
	"gateway/store"
	"gateway/store/benchfloor"
)

// The bench database: created when missing, migrated, seeded with the bench account, its
// number, template and messages, and a live key for the run.

// prepareDatabase creates, migrates and seeds the bench database and issues a live key.
func (r *benchRig) prepareDatabase(ctx context.Context) error {
	created, err := benchfloor.EnsureDatabase(ctx, r.opts.DatabaseURL)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(r.log, "bench: created database %s\n", redactDSN(r.opts.DatabaseURL))
	}
	if err := migrateUp(r.opts.DatabaseURL); err != nil {
		return err
	}
	db, err := store.Open(ctx, r.opts.DatabaseURL, 4)
	if err != nil {
		return err
	}
	st, err := store.New(db, r.cfg.SecretKey)
	if err != nil {
		db.Close()
		return err
	}
	r.store = st
	r.floor = benchfloor.New(st)
	acct, err := st.AccountByEmail(ctx, benchAccountEmail)
	if errors.Is(err, store.ErrNotFound) {
		acct, err = createAccount(ctx, st, "Bench", benchAccountEmail)
	}
	if err != nil {
		return fmt.Errorf("bench account: %w", err)
	}
	if _, err := st.ConnectNumber(ctx, store.Connection{AccountID: acct.ID, WabaID: benchNumber.WabaID,
		PhoneNumberID: benchNumber.PhoneNumberID, PhoneNumber: benchNumber.DisplayPhoneNumber,
		DisplayName: benchNumber.VerifiedName, AccessToken: benchNumber.AccessToken}); err != nil {
		return fmt.Errorf("bench number: %w", err)
	}
	t0 := time.Now()
	r.seed, err = r.floor.SeedData(ctx, acct.ID, benchTemplate, r.opts.Messages, func(done, total int64) {
		fmt.Fprintf(r.log, "bench: seeded %s of %s messages (%s)\n", thousands(done), thousands(total), time.Since(t0).Round(time.Second))
	})
	if err != nil {
		return err
	}
	if r.ids, err = r.floor.SeededIDs(ctx, acct.ID); err != nil {
		return err
	}
	// A lifecycle run that was killed leaves its endpoint: the rows here measure no customer
	// webhooks (the lifecycle makes its own).
	if err := r.floor.DeleteEndpoints(ctx, acct.ID); err != nil {
		return fmt.Errorf("old endpoints: %w", err)
	}
	if err := r.floor.Vacuum(ctx); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	key, err := createKey(ctx, st, acct.ID, "live")
	if err != nil {
		return err
	}
	r.key = key.Key
	keyID := key.ID
	r.onClose(func() { st.RevokeAPIKey(context.Background(), keyID) })
	return nil
}

// migrateUp applies every migration to the database at dsn.
func migrateUp(dsn string) error {
	m, err := store.NewMigrator(dsn, migrations.FS)
	if err != nil {
		return err
	}
	defer m.Close()
	if err := m.Up(); err != nil {
		return fmt.Errorf("migrate up: %w", err)
	}
	return nil
}

// createAccount creates the bench account with a random join code.
func createAccount(ctx context.Context, st *store.Store, name, email string) (store.Account, error) {
	b := make([]byte, 4)
	crand.Read(b)
	return st.CreateAccount(ctx, name, email, "bench-"+hex.EncodeToString(b))
}

// issuedKey is a key as issued: its id and the key itself, shown once.
type issuedKey struct {
	ID  int64
	Key string
}

// createKey issues a key of mode for the account; Key is the key itself.
func createKey(ctx context.Context, st *store.Store, accountID int64, mode string) (issuedKey, error) {
	var out issuedKey
	key, hash, prefix, err := domain.GenerateKey(mode)
	if err != nil {
		return out, err
	}
	k, err := st.CreateAPIKey(ctx, accountID, mode, hash, prefix)
	if err != nil {
		return out, fmt.Errorf("create key for account %d: %w", accountID, err)
	}
	out.ID, out.Key = k.ID, key
	return out, nil
}
