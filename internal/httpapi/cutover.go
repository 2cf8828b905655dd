package httpapi

import (
	"context"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// GetTaskSchedule answers GET /tasks/{id}/schedule.
func (s *Server) GetTaskSchedule(ctx context.Context, req api.GetTaskScheduleRequestObject) (api.GetTaskScheduleResponseObject, error) {
	sch, err := s.service.Schedule(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTaskSchedule200JSONResponse(scheduleOf(sch)), nil
}

// SetTaskSchedule answers PUT /tasks/{id}/schedule.
func (s *Server) SetTaskSchedule(ctx context.Context, req api.SetTaskScheduleRequestObject) (api.SetTaskScheduleResponseObject, error) {
	in := req.Body
	sch, err := s.service.SetSchedule(ctx, req.Id, migration.Schedule{
		Every: migration.ScheduleEvery(in.EveryMinutes), At: in.At, TimeZone: in.TimeZone,
		Until: in.Until, FinalAt: in.FinalAt,
	})
	if err != nil {
		return nil, err
	}
	return api.SetTaskSchedule200JSONResponse(scheduleOf(sch)), nil
}

// RemoveTaskSchedule answers DELETE /tasks/{id}/schedule.
func (s *Server) RemoveTaskSchedule(ctx context.Context, req api.RemoveTaskScheduleRequestObject) (api.RemoveTaskScheduleResponseObject, error) {
	if err := s.service.RemoveSchedule(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.RemoveTaskSchedule204Response{}, nil
}

func scheduleOf(sch migration.Schedule) api.Schedule {
	at := sch.At
	if at == nil {
		at = []string{}
	}
	return api.Schedule{EveryMinutes: int(sch.Every / time.Minute), At: at, TimeZone: sch.TimeZone,
		Until: sch.Until, FinalAt: sch.FinalAt, NextPassAt: sch.NextPassAt, FinalPass: sch.FinalPass, Words: sch.Describe()}
}

// StartFinalPass answers POST /tasks/{id}/final.
func (s *Server) StartFinalPass(ctx context.Context, req api.StartFinalPassRequestObject) (api.StartFinalPassResponseObject, error) {
	if err := s.service.FinalPassNow(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.StartFinalPass202Response{}, nil
}

// PauseTask answers POST /tasks/{id}/pause.
func (s *Server) PauseTask(ctx context.Context, req api.PauseTaskRequestObject) (api.PauseTaskResponseObject, error) {
	stop := req.Body != nil && req.Body.Stop
	if err := s.service.PauseTask(ctx, req.Id, stop); err != nil {
		return nil, err
	}
	return api.PauseTask204Response{}, nil
}

// ResumeTask answers POST /tasks/{id}/resume.
func (s *Server) ResumeTask(ctx context.Context, req api.ResumeTaskRequestObject) (api.ResumeTaskResponseObject, error) {
	if err := s.service.ResumeTask(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.ResumeTask204Response{}, nil
}

// GetTaskLifecycle answers GET /tasks/{id}/lifecycle.
func (s *Server) GetTaskLifecycle(ctx context.Context, req api.GetTaskLifecycleRequestObject) (api.GetTaskLifecycleResponseObject, error) {
	l, err := s.service.Lifecycle(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	out := api.GetTaskLifecycle200JSONResponse{Stage: api.Stage(l.Stage), Words: l.Words, TimeZone: l.TimeZone,
		NextPassAt: l.NextPassAt, FinalAt: l.FinalAt, PausedAt: l.PausedAt}
	if l.LastPass != nil {
		last := passOf(*l.LastPass)
		out.LastPass = &last
	}
	return out, nil
}
