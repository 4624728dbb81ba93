//go:build unix

package mcpsource

import (
	"os/exec"
	"syscall"
)

// setGroup starts cmd in a process group of its own, so that stop reaches
// the children it starts too (a launcher such as npx or uvx).
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills cmd's process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil && cmd.Process.Pid > 0 {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
