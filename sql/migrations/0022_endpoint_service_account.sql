-- A Google service account with domain-wide delegation ('service_account'):
-- its JSON key file is the endpoint's client secret (sealed), and it gets
-- each account's token by a signed JWT naming the user (RFC 7523).
ALTER TABLE endpoints DROP CONSTRAINT endpoints_oauth2_grant_check, DROP CONSTRAINT endpoints_oauth2_complete;
ALTER TABLE endpoints
    ADD CONSTRAINT endpoints_oauth2_grant_check CHECK (oauth2_grant IN ('refresh_token', 'client_credentials', 'service_account')),
    ADD CONSTRAINT endpoints_oauth2_complete CHECK (auth_method <> 'oauth2' OR (oauth2_token_url <> '' AND oauth2_client_id <> ''
        AND (oauth2_grant = 'refresh_token' OR oauth2_client_secret IS NOT NULL)));
