package migration

import (
	"context"
	"time"
)

// CreateTask validates spec and stores a new idle task.
func (s *Service) CreateTask(ctx context.Context, spec TaskSpec) (int64, error) {
	if err := spec.Normalize(); err != nil {
		return 0, err
	}
	return s.store.TaskCreate(ctx, spec)
}

// Task returns one task with its account counts and totals.
func (s *Service) Task(ctx context.Context, id int64) (Task, error) {
	t, err := s.store.TaskGet(ctx, id)
	if err != nil {
		return t, err
	}
	return t, s.nameTestServers(ctx, &t)
}

// nameTestServers names the task's servers in its test figures while its
// login test goes slowly, for the words that say which one makes it slow
// (TestFigures.PaceWords): two reads of endpoints, only then.
func (s *Service) nameTestServers(ctx context.Context, t *Task) error {
	if !t.Tests.Slow(time.Now()) {
		return nil
	}
	src, err := s.store.EndpointGet(ctx, t.SourceEndpointID)
	if err != nil {
		return err
	}
	dst, err := s.store.EndpointGet(ctx, t.DestinationEndpointID)
	if err != nil {
		return err
	}
	t.Tests.SourceHost, t.Tests.DestinationHost = src.Host, dst.Host
	return nil
}

// TaskState returns a task's state: ErrNotFound tells a missing task.
func (s *Service) TaskState(ctx context.Context, id int64) (TaskState, error) {
	return s.store.TaskState(ctx, id)
}

// Tasks lists every task in ascending id order.
func (s *Service) Tasks(ctx context.Context) ([]Task, error) {
	tasks, err := s.store.TaskList(ctx)
	for i := range tasks {
		if err == nil {
			err = s.nameTestServers(ctx, &tasks[i])
		}
	}
	return tasks, err
}

// UpdateTask replaces the spec of a task that is not running.
func (s *Service) UpdateTask(ctx context.Context, id int64, spec TaskSpec) error {
	if err := spec.Normalize(); err != nil {
		return err
	}
	return s.store.TaskUpdate(ctx, id, spec)
}

// DeleteTask deletes a task that is not running, and its accounts.
func (s *Service) DeleteTask(ctx context.Context, id int64) error {
	return s.store.TaskDelete(ctx, id)
}
