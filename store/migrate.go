package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database/postgres"
	"github.com/golang-migrate/migrate/v4/source/iofs"
)

// Migrator applies the embedded migrations. It owns its own connection pool, because
// golang-migrate closes the pool it is given.
type Migrator struct{ m *migrate.Migrate }

// NewMigrator opens a dedicated connection to dsn over the migration files in files. It fails
// when the database does not answer or the files are not valid migrations.
func NewMigrator(dsn string, files fs.FS) (*Migrator, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	drv, err := postgres.WithInstance(db, &postgres.Config{})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "postgres", drv)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	m.LockTimeout = 2 * time.Minute
	return &Migrator{m: m}, nil
}

// Up applies every pending migration; no pending migration is not an error. A dirty database
// (a migration failed half-way) is reported, never forced.
func (g *Migrator) Up() error {
	if err := g.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

// Down reverts n migrations (n > 0).
func (g *Migrator) Down(n int) error {
	if n <= 0 {
		return fmt.Errorf("down needs a positive count, got %d", n)
	}
	if err := g.m.Steps(-n); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return err
	}
	return nil
}

// Version reports the applied version and whether it is dirty; version 0 means none applied.
func (g *Migrator) Version() (uint, bool, error) {
	v, dirty, err := g.m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return v, dirty, err
}

// Force sets the recorded version without running anything, to repair a dirty database by hand.
func (g *Migrator) Force(v int) error { return g.m.Force(v) }

// Close releases the migrator's connection.
func (g *Migrator) Close() error {
	serr, derr := g.m.Close()
	return errors.Join(serr, derr)
}

// LatestVersion returns the highest migration version in files, which readiness compares
// with the applied version.
func LatestVersion(files fs.FS) (uint, error) {
	src, err := iofs.New(files, ".")
	if err != nil {
		return 0, err
	}
	defer src.Close()
	v, err := src.First()
	if err != nil {
		return 0, err
	}
	for {
		next, err := src.Next(v)
		if err != nil {
			return v, nil
		}
		v = next
	}
}

// SchemaVersion reads the applied migration version from the database (0 when none) and
// whether it is dirty.
func (s *Store) SchemaVersion(ctx context.Context) (uint, bool, error) {
	var row struct {
		Version int64 `db:"version"`
		Dirty   bool  `db:"dirty"`
	}
	err := s.db.GetContext(ctx, &row, `SELECT version, dirty FROM schema_migrations LIMIT 1`)
	if err != nil {
		return 0, false, translate(err)
	}
	return uint(row.Version), row.Dirty, nil
}
