-- OAuth 2.0 logins ('oauth2'): the accounts log in with bearer tokens
-- (XOAUTH2 or OAUTHBEARER) that the endpoint's registered application gets
-- from its token endpoint, either from each account's refresh token
-- ('refresh_token', kept in the account's password column, sealed) or for
-- the application alone ('client_credentials', Microsoft 365 app-only),
-- which then needs its client secret (sealed, label
-- endpoints/ID/oauth2_client_secret).
ALTER TABLE endpoints DROP CONSTRAINT endpoints_auth_method_check;
ALTER TABLE endpoints
    ADD CONSTRAINT endpoints_auth_method_check CHECK (auth_method IN ('password', 'master', 'oauth2')),
    ADD COLUMN oauth2_grant         text NOT NULL DEFAULT 'refresh_token' CHECK (oauth2_grant IN ('refresh_token', 'client_credentials')),
    ADD COLUMN oauth2_token_url     text NOT NULL DEFAULT '',
    ADD COLUMN oauth2_client_id     text NOT NULL DEFAULT '',
    ADD COLUMN oauth2_scope         text NOT NULL DEFAULT '',
    ADD COLUMN oauth2_mechanism     text NOT NULL DEFAULT 'xoauth2' CHECK (oauth2_mechanism IN ('xoauth2', 'oauthbearer')),
    ADD COLUMN oauth2_client_secret bytea,
    ADD CONSTRAINT endpoints_oauth2_complete CHECK (auth_method <> 'oauth2' OR (oauth2_token_url <> '' AND oauth2_client_id <> ''
        AND (oauth2_grant <> 'client_credentials' OR oauth2_client_secret IS NOT NULL)));
