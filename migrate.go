package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// migrateCmd runs `gateway migrate up | down N | version | force V` and prints one JSON object.
func migrateCmd(cfg config, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: gateway migrate up | down N | version | force V")
	}
	m, err := newMigrator(cfg)
	if err != nil {
		return err
	}
	defer m.Close()
	num := func() (int, error) {
		if len(args) < 2 {
			return 0, fmt.Errorf("migrate %s needs a number", args[0])
		}
		return strconv.Atoi(args[1])
	}
	switch args[0] {
	case "up":
		err = m.Up()
	case "down":
		n, nerr := num()
		if nerr != nil {
			return nerr
		}
		err = m.Down(n)
	case "force":
		n, nerr := num()
		if nerr != nil {
			return nerr
		}
		err = m.Force(n)
	case "version":
	default:
		return fmt.Errorf("unknown migrate command %q", args[0])
	}
	if err != nil {
		return err
	}
	v, dirty, err := m.Version()
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(map[string]any{"version": v, "dirty": dirty})
}
