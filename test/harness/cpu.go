/*
Copyright 2026 The vault-keycloak-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package harness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc's CPU times on Linux.
const ticksPerSecond = 100

// processCPU reads a process's command name and CPU time (user and
// system) from /proc.
func processCPU(pid int) (string, time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, err
	}
	// The command name is in parentheses and may hold spaces; the fields
	// after it start at ") ".
	head, rest, _ := strings.Cut(string(data), ") ")
	_, comm, _ := strings.Cut(head, " (")
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return "", 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return comm, time.Duration(utime+stime) * time.Second / ticksPerSecond, nil
}

// CPUByCommand sums the CPU time of every running process by command name
// (kube-apiserver, etcd, vault, manager, java, ...): taken before and
// after a run, it says where a machine's cores went.
func CPUByCommand() map[string]time.Duration {
	out := map[string]time.Duration{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if comm, cpu, err := processCPU(pid); err == nil {
			out[comm] += cpu
		}
	}
	return out
}

// BusyCPU is the CPU time the whole machine has spent busy since boot
// (every core, every process, the kernel's work included): the difference
// of two readings is how much of the machine was in use between them.
func BusyCPU() (time.Duration, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, fmt.Errorf("unexpected first line of /proc/stat: %q", line)
	}
	var busy int64
	for i, f := range fields[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %w", err)
		}
		busy += v
	}
	return time.Duration(busy) * time.Second / ticksPerSecond, nil
}
