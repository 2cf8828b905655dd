-- An endpoint's own limits, in place of its profile's (transfer.Limits);
-- 0: the profile's. Connections: at once to the server by every account
-- together (admission holds it across processes); account connections:
-- at once per mailbox; daily bytes: per mailbox over any 24 hours.
ALTER TABLE endpoints
    ADD COLUMN max_message_bytes bigint NOT NULL DEFAULT 0 CHECK (max_message_bytes >= 0),
    ADD COLUMN daily_download_bytes bigint NOT NULL DEFAULT 0 CHECK (daily_download_bytes >= 0),
    ADD COLUMN daily_upload_bytes bigint NOT NULL DEFAULT 0 CHECK (daily_upload_bytes >= 0),
    ADD COLUMN max_connections int NOT NULL DEFAULT 0 CHECK (max_connections >= 0),
    ADD COLUMN max_account_connections int NOT NULL DEFAULT 0 CHECK (max_account_connections >= 0);

-- What each mailbox moved, by server (host:port, lower case), login (lower
-- case), direction and hour: the daily byte budgets are counted over the
-- last 24 hours from it, by every process. Rows older than a day are of no
-- use and are deleted as new ones come.
CREATE TABLE mailbox_traffic (
    server text NOT NULL,
    login text NOT NULL,
    direction text NOT NULL CHECK (direction IN ('download', 'upload')),
    hour timestamptz NOT NULL,
    bytes bigint NOT NULL,
    PRIMARY KEY (server, login, direction, hour)
);
