//go:build !linux

package bench

import "os/exec"

// setParentDeathSignal is Linux-only; elsewhere the bench stops its children itself.
func setParentDeathSignal(cmd *exec.Cmd) {}
