package comparison

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/secret"
)

// serviceTool is the whole service as a user runs it: `mailmigrate serve`
// in a process of its own on a PostgreSQL database, driven through its
// API. A pass is POST /tasks/{id}/run until the task is completed: the
// API, the job queue, admission, the engine and the servers all count.
// Its CPU is the service's and its PostgreSQL's.
type serviceTool struct{ bin string }

func (serviceTool) name() string { return "service" }

// serviceRun is the service of one run, started by its first pass.
type serviceRun struct {
	cmd    *exec.Cmd
	client *api.ClientWithResponses
	taskID int64
}

func (t serviceTool) migrate(ctx context.Context, r *run) (usage, error) {
	if r.service == nil {
		s, err := t.start(r)
		if err != nil {
			return usage{}, err
		}
		r.service = s
	}
	s := r.service
	cpuBefore := groupCPU(s.cmd.Process.Pid) + postgresCPU()
	start := time.Now()
	if resp, err := s.client.RunTaskWithResponse(ctx, s.taskID); err != nil || resp.StatusCode() != http.StatusAccepted {
		return usage{}, fmt.Errorf("POST run: %v %v", err, resp)
	}
	task, err := waitFinished(ctx, s.client, s.taskID)
	peak, _ := readVmHWM(s.cmd.Process.Pid) // the process's peak so far
	u := usage{wall: time.Since(start), cpu: groupCPU(s.cmd.Process.Pid) + postgresCPU() - cpuBefore, maxRSS: peak, procs: 1}
	if err != nil {
		return u, err
	}
	if task.State != api.TaskStateCompleted {
		return u, fmt.Errorf("pass %d ended %s", r.pass, task.State)
	}
	if r.pass > 1 && task.Totals.MessagesCopied != 0 {
		return u, fmt.Errorf("the re-run copied %d messages", task.Totals.MessagesCopied)
	}
	return u, nil
}

// start runs the service on a new database and makes the task of r.
func (t serviceTool) start(r *run) (*serviceRun, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(t.bin, "serve", "--listen", addr, "--database-url", dbtest.URL(r.b), "--data-dir", r.dir,
		"--workers", fmt.Sprint(max(r.parallel, 4)), "--max-connections-per-host", "0", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "MAILMIGRATE_SECRET_KEY="+base64.StdEncoding.EncodeToString(secret.NewKey()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(r.dir, "service.log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &serviceRun{cmd: cmd}
	r.b.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck // it may have died; Wait says
		cmd.Wait()                          //nolint:errcheck // stopping
		log.Close()
	})
	base := "http://" + addr
	if err := waitReady(base + "/readyz"); err != nil {
		return nil, fmt.Errorf("%w\n%s", err, readTail(log.Name()))
	}
	s.client, err = api.NewClientWithResponses(base + "/api/v1")
	if err != nil {
		return nil, err
	}
	return s, s.createTask(r)
}

// createTask registers both servers and a task of every account of r.
func (s *serviceRun) createTask(r *run) error {
	ctx := context.Background()
	var ids [2]int64
	for i, d := range []struct {
		host string
		port int
	}{{r.src.dovecot.Host, r.src.dovecot.Port}, {r.dst.Host, r.dst.Port}} {
		resp, err := s.client.CreateEndpointWithResponse(ctx, api.EndpointInput{Host: d.host, Port: d.port, TlsMode: api.TLSModePlain})
		if err != nil || resp.JSON201 == nil {
			return fmt.Errorf("create endpoint: %v %v", err, resp)
		}
		ids[i] = resp.JSON201.Id
	}
	task, err := s.client.CreateTaskWithResponse(ctx, api.TaskInput{Name: "bench", SourceEndpointId: ids[0], DestinationEndpointId: ids[1],
		Options: &api.TaskOptions{ParallelAccounts: r.parallel}})
	if err != nil || task.JSON201 == nil {
		return fmt.Errorf("create task: %v %v", err, task)
	}
	s.taskID = task.JSON201.Id
	var csv strings.Builder
	for _, a := range r.src.accounts {
		fmt.Fprintf(&csv, "%s,%s,%s,%s\n", a.srcLogin, a.srcPassword, a.dstLogin, a.dstPassword)
	}
	resp, err := s.client.ImportAccountsWithBodyWithResponse(ctx, s.taskID, "text/csv", strings.NewReader(csv.String()))
	if err != nil || resp.StatusCode() != http.StatusCreated {
		return fmt.Errorf("import: %v %v", err, resp)
	}
	return nil
}

// waitFinished polls the task until it leaves the running states: what a
// user's script would do.
func waitFinished(ctx context.Context, client *api.ClientWithResponses, taskID int64) (api.Task, error) {
	for {
		resp, err := client.GetTaskWithResponse(ctx, taskID)
		if err != nil || resp.JSON200 == nil {
			return api.Task{}, fmt.Errorf("get task: %v %v", err, resp)
		}
		switch resp.JSON200.State {
		case api.TaskStateQueued, api.TaskStateRunning, api.TaskStateCanceling:
		default:
			return *resp.JSON200, nil
		}
		select {
		case <-ctx.Done():
			return api.Task{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func waitReady(url string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the service did not get ready at %s", url)
}

// postgresCPU is the CPU time the machine's PostgreSQL processes have
// used so far: the service's database work.
func postgresCPU() time.Duration {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var total time.Duration
	for _, path := range paths {
		line, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if s, err := parseProcStat(string(line)); err == nil && s.comm == "postgres" {
			total += s.cpu
		}
	}
	return total
}

// buildService builds the mailmigrate binary into dir.
func buildService(b *testing.B, dir string) string {
	b.Helper()
	bin := filepath.Join(dir, "mailmigrate")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/mailmigrate/mailmigrate/cmd/mailmigrate").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func readTail(path string) string {
	data, _ := os.ReadFile(path)
	return tail(string(data), 20)
}
