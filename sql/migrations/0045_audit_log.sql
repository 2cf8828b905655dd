-- The audit trail: every request that changes something (or tried to),
-- who made it, from where, what and how it ended. Never a body or a query
-- string: they carry passwords and tokens. Kept for the configured time
-- (--audit-retention), then pruned.
CREATE TABLE audit_log (
    id         bigserial   PRIMARY KEY,
    at         timestamptz NOT NULL DEFAULT now(),
    actor      text        NOT NULL, -- whose token let the request in; '' when none did
    remote     text        NOT NULL, -- the client's address
    method     text        NOT NULL,
    route      text        NOT NULL, -- the API route, e.g. /api/v1/tasks/{id}/run; '' when none was reached
    what       text        NOT NULL, -- the route's summary in the API's words
    path       text        NOT NULL, -- the path requested, without its query
    status     int         NOT NULL,
    request_id text        NOT NULL
);
CREATE INDEX audit_log_at ON audit_log (at);
