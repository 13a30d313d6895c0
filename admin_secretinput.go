package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// adminStdin is what a secret file named "-" reads (tests replace it).
var adminStdin io.Reader = os.Stdin

// maxSecretInput bounds a secret read from a file or standard input.
const maxSecretInput = 64 << 10

// secretInput is one secret an admin command takes, never as an argument (the process list
// shows every process's arguments to every local user): from the file named by --<name>-file
// ("-" for standard input) or from the environment variable env.
type secretInput struct {
	name   string // "access-token": the refused --access-token, and --access-token-file
	env    string
	file   *string
	inline *string
}

// newSecretInput defines the input's flags on fs.
func newSecretInput(fs *flag.FlagSet, name, env, usage string) *secretInput {
	return &secretInput{name: name, env: env,
		file:   fs.String(name+"-file", "", usage+`: read from this file ("-" for standard input)`),
		inline: fs.String(name, "", "refused: use --"+name+"-file or "+env),
	}
}

// read returns the secret and whether one was given. A value given on the command line, both
// a file and the environment variable, an empty secret or an unreadable file are errors. One
// trailing line break is dropped from a file.
func (s *secretInput) read(getenv func(string) string) (string, bool, error) {
	if *s.inline != "" {
		return "", false, fmt.Errorf("--%s on the command line is visible to every local user in the process list: "+
			"give it with --%s-file FILE, --%s-file - (standard input) or %s", s.name, s.name, s.name, s.env)
	}
	fromEnv := getenv(s.env)
	switch {
	case *s.file != "" && fromEnv != "":
		return "", false, fmt.Errorf("--%s-file and %s are both set: give one", s.name, s.env)
	case fromEnv != "":
		return fromEnv, true, nil
	case *s.file == "":
		return "", false, nil
	}
	var r io.Reader = adminStdin
	if *s.file != "-" {
		f, err := os.Open(*s.file)
		if err != nil {
			return "", false, fmt.Errorf("--%s-file: %w", s.name, err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxSecretInput+1))
	if err != nil {
		return "", false, fmt.Errorf("--%s-file: %w", s.name, err)
	}
	if len(b) > maxSecretInput {
		return "", false, fmt.Errorf("--%s-file: longer than %d bytes", s.name, maxSecretInput)
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if v == "" {
		return "", false, fmt.Errorf("--%s-file: the %s is empty", s.name, strings.ReplaceAll(s.name, "-", " "))
	}
	return v, true, nil
}

// required is read for a secret the command cannot do without.
func (s *secretInput) required(getenv func(string) string) (string, error) {
	v, ok, err := s.read(getenv)
	if err == nil && !ok {
		err = errors.New("the " + strings.ReplaceAll(s.name, "-", " ") + " is required: give it with --" + s.name +
			"-file FILE, --" + s.name + "-file - (standard input) or " + s.env)
	}
	return v, err
}

// Where operator commands read their secrets from, besides a file.
const (
	envAdminAccessToken = "GATEWAY_ADMIN_ACCESS_TOKEN"
	envAdminPassword    = "GATEWAY_ADMIN_PASSWORD"
)
