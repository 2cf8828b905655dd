-- The other names an account's user may sign in as, declared when an
-- authorization starts (docs/security.md#the-right-person-signs-in): the
-- same mailbox under another name, e.g. a tenant's own domain.
ALTER TABLE oauth_authorizations ADD COLUMN also_accept text[] NOT NULL DEFAULT '{}';
