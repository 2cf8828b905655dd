package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// ListTasks answers GET /tasks.
func (s *Server) ListTasks(ctx context.Context, _ api.ListTasksRequestObject) (api.ListTasksResponseObject, error) {
	tasks, err := s.service.Tasks(ctx)
	if err != nil {
		return nil, err
	}
	out := make(api.ListTasks200JSONResponse, len(tasks))
	for i, t := range tasks {
		out[i] = taskToAPI(t)
	}
	return out, nil
}

// CreateTask answers POST /tasks.
func (s *Server) CreateTask(ctx context.Context, req api.CreateTaskRequestObject) (api.CreateTaskResponseObject, error) {
	spec, err := taskSpecFromAPI(req.Body)
	if err != nil {
		return nil, err
	}
	id, err := s.service.CreateTask(ctx, spec)
	if err != nil {
		return nil, err
	}
	return api.CreateTask201JSONResponse{Id: id}, nil
}

// GetTask answers GET /tasks/{id}.
func (s *Server) GetTask(ctx context.Context, req api.GetTaskRequestObject) (api.GetTaskResponseObject, error) {
	t, err := s.service.Task(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.GetTask200JSONResponse(taskToAPI(t)), nil
}

// UpdateTask answers PUT /tasks/{id}.
func (s *Server) UpdateTask(ctx context.Context, req api.UpdateTaskRequestObject) (api.UpdateTaskResponseObject, error) {
	spec, err := taskSpecFromAPI(req.Body)
	if err != nil {
		return nil, err
	}
	if err := s.service.UpdateTask(ctx, req.Id, spec); err != nil {
		return nil, err
	}
	return api.UpdateTask204Response{}, nil
}

// DeleteTask answers DELETE /tasks/{id}.
func (s *Server) DeleteTask(ctx context.Context, req api.DeleteTaskRequestObject) (api.DeleteTaskResponseObject, error) {
	if err := s.service.DeleteTask(ctx, req.Id); err != nil {
		return nil, err
	}
	return api.DeleteTask204Response{}, nil
}

// GetTaskReport answers GET /tasks/{id}/report.csv.
func (s *Server) GetTaskReport(ctx context.Context, req api.GetTaskReportRequestObject) (api.GetTaskReportResponseObject, error) {
	var report bytes.Buffer
	if err := s.service.WriteTaskReport(ctx, req.Id, &report); err != nil {
		return nil, err
	}
	disposition := fmt.Sprintf(`attachment; filename="task-%d-report.csv"`, req.Id)
	return api.GetTaskReport200TextcsvResponse{
		Body:          &report,
		ContentLength: int64(report.Len()),
		Headers:       api.GetTaskReport200ResponseHeaders{ContentDisposition: &disposition},
	}, nil
}

// taskSpecFromAPI parses a task as sent; the service checks the rest.
func taskSpecFromAPI(in *api.TaskInput) (migration.TaskSpec, error) {
	spec := migration.TaskSpec{
		Name:                  in.Name,
		SourceEndpointID:      in.SourceEndpointId,
		DestinationEndpointID: in.DestinationEndpointId,
	}
	if in.Options == nil {
		return spec, nil
	}
	options, err := taskOptionsFromAPI(*in.Options)
	spec.Options = options
	return spec, err
}

func taskOptionsFromAPI(in api.TaskOptions) (migration.TaskOptions, error) {
	include, err := migration.ParseFolderPatterns("options.include_folders", in.IncludeFolders)
	if err != nil {
		return migration.TaskOptions{}, err
	}
	exclude, err := migration.ParseFolderPatterns("options.exclude_folders", in.ExcludeFolders)
	if err != nil {
		return migration.TaskOptions{}, err
	}
	since, err := migration.ParseSince(in.Since)
	return migration.TaskOptions{
		IncludeFolders:   include,
		ExcludeFolders:   exclude,
		FolderMap:        in.FolderMap,
		MaxMessageBytes:  in.MaxMessageBytes,
		Since:            since,
		ParallelAccounts: in.ParallelAccounts,
		MirrorDeletions:  in.MirrorDeletions,
		GmailLabels:      migration.GmailLabels(in.GmailLabels),
		RefuseBlocked:    in.RefuseBlocked,
		VerifyCopies:     migration.VerifyCopies(in.VerifyCopies),
	}, err
}

func taskToAPI(t migration.Task) api.Task {
	o := t.Options
	byState := func(s migration.AccountState) int64 { return t.Accounts.ByState[s] }
	return api.Task{
		Id:                    t.ID,
		Name:                  t.Name,
		SourceEndpointId:      t.SourceEndpointID,
		DestinationEndpointId: t.DestinationEndpointID,
		Options: api.TaskOptions{
			IncludeFolders:   migration.FolderPatternTexts(o.IncludeFolders),
			ExcludeFolders:   migration.FolderPatternTexts(o.ExcludeFolders),
			FolderMap:        o.FolderMap,
			MaxMessageBytes:  o.MaxMessageBytes,
			Since:            migration.SinceText(o.Since),
			ParallelAccounts: o.ParallelAccounts,
			MirrorDeletions:  o.MirrorDeletions,
			GmailLabels:      api.GmailLabels(o.GmailLabels),
			RefuseBlocked:    o.RefuseBlocked,
			VerifyCopies:     api.VerifyCopies(o.VerifyCopies),
		},
		State: api.TaskState(t.State),
		Accounts: api.AccountCounts{
			Total:               t.Accounts.Total,
			Idle:                byState(migration.AccountIdle),
			Queued:              byState(migration.AccountQueued),
			Running:             byState(migration.AccountRunning),
			Testing:             byState(migration.AccountTesting),
			Completed:           byState(migration.AccountCompleted),
			CompletedWithErrors: byState(migration.AccountCompletedWithErrors),
			Failed:              byState(migration.AccountFailed),
			Canceled:            byState(migration.AccountCanceled),
		},
		Totals: api.Totals{
			MessagesCopied:       t.Totals.MessagesCopied,
			BytesCopied:          t.Totals.BytesCopied,
			MessagesCopiedToDate: t.Totals.MessagesCopiedToDate,
			BytesCopiedToDate:    t.Totals.BytesCopiedToDate,
			MessagesSkipped:      t.Totals.MessagesSkipped,
			MessagesFailed:       t.Totals.MessagesFailed,
			SourceMessages:       t.Totals.SourceMessages,
			SourceBytes:          t.Totals.SourceBytes,
			AccountsUncounted:    t.Totals.AccountsUncounted,
		},
		Tests:      testFigures(t.Tests, t.Logins, time.Now()),
		Logins:     api.LoginFigures{Working: t.Logins.Working, Refused: t.Logins.Refused, Untested: t.Logins.Untested},
		CreatedAt:  t.CreatedAt,
		UpdatedAt:  t.UpdatedAt,
		StartedAt:  t.StartedAt,
		FinishedAt: t.FinishedAt,
		PausedAt:   t.PausedAt,
	}
}

// testFigures are a task's login test figures, with the time left of one
// under way.
func testFigures(f migration.TestFigures, logins migration.LoginFigures, now time.Time) api.TestFigures {
	out := api.TestFigures{Total: f.Total, Tested: f.Tested, Failed: f.Failed, Running: f.Running, StartedAt: f.StartedAt,
		Pace: f.PaceWords(now, logins.Working)}
	if left, ok := f.TimeLeft(now); ok {
		seconds := int64(left.Round(time.Second) / time.Second)
		out.TimeLeftSeconds = &seconds
	}
	return out
}

// ListTaskPasses answers GET /tasks/{id}/passes.
func (s *Server) ListTaskPasses(ctx context.Context, req api.ListTaskPassesRequestObject) (api.ListTaskPassesResponseObject, error) {
	passes, err := s.service.Passes(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListTaskPasses200JSONResponse(passesOf(passes)), nil
}

// ListTaskRunsByOldPath answers GET /tasks/{id}/runs, the old path of
// the passes.
func (s *Server) ListTaskRunsByOldPath(ctx context.Context, req api.ListTaskRunsByOldPathRequestObject) (api.ListTaskRunsByOldPathResponseObject, error) {
	passes, err := s.service.Passes(ctx, req.Id)
	if err != nil {
		return nil, err
	}
	return api.ListTaskRunsByOldPath200JSONResponse(passesOf(passes)), nil
}

// passesOf are a task's passes as the API shows them.
func passesOf(passes []migration.Pass) []api.Pass {
	out := make([]api.Pass, len(passes))
	for i, p := range passes {
		out[i] = passOf(p)
	}
	return out
}

// passOf is a pass as the API shows it.
func passOf(p migration.Pass) api.Pass {
	f := p.Figures
	run := api.Pass{Pass: p.Number, StartedBy: api.PassStarter(p.StartedBy), Accounts: p.Accounts, StartedAt: p.StartedAt, EndedAt: p.EndedAt,
		AccountsCompleted: f.Completed, AccountsCompletedWithErrors: f.CompletedWithErrors,
		AccountsFailed: f.Failed, AccountsCanceled: f.Canceled,
		MessagesCopied: f.MessagesCopied, BytesCopied: f.BytesCopied, MessagesSkipped: f.MessagesSkipped, MessagesFailed: f.MessagesFailed,
		SourceMessages: f.SourceMessages, SourceBytes: f.SourceBytes, AccountsUncounted: int(f.AccountsUncounted)}
	if p.State != "" {
		state := api.TaskState(p.State)
		run.State = &state
	}
	return run
}
