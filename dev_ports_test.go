package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"

	"gateway/store/storetest"
)

// With both of its ports held by another process, `gateway dev` (what make run runs) stops at
// once with a message naming each address and the variable that moves it, before it starts the
// simulator, migrates or issues keys: the database it was given stays empty.
func TestDevRefusesTakenPorts(t *testing.T) {
	t.Parallel()
	var held []string
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		held = append(held, ln.Addr().String())
	}
	dsn := emptyDatabase(t)
	for _, args := range [][]string{{"dev"}, {"dev", "--check-ports"}} {
		bin := gatewayBinary(t)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "GATEWAY_ADDR="+held[0], "PLATFORM_SIM_ADDR="+held[1],
			"GATEWAY_DEV_KEYS_FILE="+t.TempDir()+"/keys.json")
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		msg := string(out)
		if err == nil || timedOut {
			t.Fatalf("gateway %v with both ports taken: err %v, output:\n%s", args, err, msg)
		}
		for _, want := range []string{held[0], held[1], "GATEWAY_ADDR=", "PLATFORM_SIM_ADDR=", "nothing was started or created", "make run"} {
			if !strings.Contains(msg, want) {
				t.Errorf("gateway %v: the message does not say %q:\n%s", args, want, msg)
			}
		}
		if strings.Contains(msg, "svc_") || strings.Contains(msg, "live key") {
			t.Errorf("gateway %v issued keys:\n%s", args, msg)
		}
	}
	db, err := sqlx.Open("postgres", storetest.DirectDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var tables int
	if err := db.Get(&tables, `SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'`); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("gateway dev created %d tables before refusing", tables)
	}
}

// emptyDatabase creates a database with nothing in it, dropped at cleanup.
func emptyDatabase(t *testing.T) string {
	t.Helper()
	admin, err := sqlx.Open("postgres", storetest.AdminDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var b [6]byte
	rand.Read(b[:])
	name := "gw_empty_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(`CREATE DATABASE ` + name); err != nil {
		t.Fatalf("create database (is PostgreSQL running? make test starts it): %v", err)
	}
	t.Cleanup(func() {
		if a, err := sqlx.Open("postgres", storetest.AdminDSN()); err == nil {
			a.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`)
			a.Close()
		}
	})
	u := storetest.AdminDSN()
	i := strings.LastIndex(u, "/")
	q := strings.Index(u[i:], "?")
	if q < 0 {
		return u[:i+1] + name
	}
	return u[:i+1] + name + u[i+q:]
}
