/**
 * The database schema, as versioned steps applied in order (see `migrate-schema.ts`). A released
 * step is never edited: a change is a new step. Each runs in the transaction that records it.
 */
export type Migration = { version: number; name: string; sql: string };

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'state documents, sessions and their events',
    sql: `
-- Facts about this database: the epoch of event ids (another database, other ids).
create table molf_meta (
  key text primary key,
  value text not null
);
insert into molf_meta (key, value) values ('event_epoch', substr(md5(random()::text || clock_timestamp()::text), 1, 8));

create table sessions (
  session_id text primary key,
  worker_id text not null,
  name text not null,
  untitled boolean not null default false,
  model text,
  parent_session_id text,
  parent_tool_call_id text,
  parent_agent text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  message_count integer not null default 0,
  status text not null default 'idle',
  input_tokens bigint not null default 0,
  output_tokens bigint not null default 0,
  cache_read_tokens bigint not null default 0,
  cache_write_tokens bigint not null default 0,
  cost_usd numeric,
  unpriced_calls integer not null default 0
);
create index sessions_by_recency on sessions (updated_at desc, session_id);
create index sessions_by_worker on sessions (worker_id, updated_at desc);
create index sessions_by_parent on sessions (parent_session_id) where parent_session_id is not null;

create table session_messages (
  session_id text not null references sessions on delete cascade,
  position integer not null,
  body text not null,
  primary key (session_id, position)
);

create table session_queue (
  session_id text not null references sessions on delete cascade,
  message_id text not null,
  body text not null,
  queued bigint generated always as identity,
  primary key (session_id, message_id)
);

create table session_attachments (
  session_id text not null references sessions on delete cascade,
  sha256 text not null,
  data bytea not null,
  primary key (session_id, sha256)
);

-- Small state kept whole by name (credentials.json, workers/{id}/permissions.jsonc, ...), as the
-- data directory keeps it in files; version moves with every write.
create table state_documents (
  name text primary key,
  content bytea not null,
  version bigint not null default 1,
  updated_at timestamptz not null default now()
);

-- The instances serving this database, and which of them runs each session's turns: a lease on
-- the database's clock, renewed by its holder, free again once it expires.
create table instances (
  instance_id text primary key,
  started_at timestamptz not null default now(),
  seen_at timestamptz not null default now()
);
create table session_leases (
  session_id text primary key,
  instance_id text not null,
  expires_at timestamptz not null
);
create index sessions_busy on sessions (session_id) where status = 'busy';
-- Approvals waiting for a person, kept by the instance whose turn asks: any instance lists them,
-- and an answer from any instance is written here first (the first one wins), then applied by it.
create table pending_approvals (
  approval_id text primary key,
  session_id text,
  worker_id text not null,
  instance_id text not null,
  approval text not null,
  answer text,
  outcome text
);

-- Which instance fires each scheduled run of a cron job: the first to claim the slot.
create table cron_claims (
  job_id text not null,
  slot text not null,
  instance_id text not null,
  claimed_at timestamptz not null default now(),
  primary key (job_id, slot)
);

-- Which instance holds each connected worker's socket (a session's turns run there when they can),
-- and the worker's registration as that instance holds it (its tools, catalog, MCP servers): the
-- other instances use it to run turns whose tool calls they route there.
create table worker_connections (
  worker_id text primary key,
  instance_id text not null,
  registration text not null,
  version bigint not null default 1,
  connected_at timestamptz not null default now()
);

-- Tool calls and worker requests: asked by the instance running a turn (the requester), run by
-- the instance holding the worker's socket (the runner), and answered here (outcome, the result
-- as JSON). A call that was in flight when its requester died is found again by the session's call
-- id, and a result the worker delivers to any instance is stored before it is acknowledged.
create table worker_jobs (
  job_id text primary key,
  worker_id text not null,
  kind text not null,
  session_id text,
  step_id text,
  session_tool_call_id text,
  job text not null,
  requester text not null,
  runner text,
  worker_instance text,
  outcome text,
  created_at timestamptz not null default now(),
  -- Past it the job is never sent to a worker (its asker gave up): a job left by servers that died
  -- does not run when its worker comes back days later.
  deadline_at timestamptz not null,
  finished_at timestamptz
);
create index worker_jobs_open on worker_jobs (worker_id) where outcome is null;
create index worker_jobs_session_call on worker_jobs (session_id, step_id, session_tool_call_id);
create index worker_jobs_finished on worker_jobs (finished_at) where finished_at is not null;

-- The approval audit trail, appended by every instance and never changed: one row per decision of
-- the gate or change of a worker's rules. The record is the JSON the file log keeps as one line
-- (text: jsonb refuses some strings a command may hold); grant_ids finds the "always" answer that
-- gave a grant.
create table audit_log (
  id bigserial primary key,
  at timestamptz not null,
  worker_id text not null,
  decision text not null,
  grant_ids text[] not null default '{}',
  record text not null,
  -- Set on a record copied from a data dir's file by molf migrate (its line and hash): a second
  -- copy adds nothing.
  copied_from text
);
create unique index audit_log_copied on audit_log (copied_from) where copied_from is not null;
create index audit_log_by_time on audit_log (at, id);
create index audit_log_by_worker on audit_log (worker_id, at, id);
create index audit_log_by_grant on audit_log using gin (grant_ids);

-- Numbered by the instance that publishes them; the key refuses a number taken twice.
create table session_events (
  session_id text not null,
  seq bigint not null,
  type text not null,
  body text not null,
  primary key (session_id, seq)
);
`,
  },
  {
    version: 2,
    name: 'cron claims keep how their run fired',
    sql: `
-- Set by the claiming instance once its run's prompt is stored, before the run is recorded on the
-- job: an instance that takes the slot over (the claimer died meanwhile) records this instead of
-- firing the run again.
alter table cron_claims add column fired text;
`,
  },
  {
    version: 3,
    name: 'session events: an index of turn starts and ends',
    sql: `
-- Each session's newest turn.started in one index step: a stored event of another turn than the
-- running one is refused (the late events of an instance that lost the session), and a subscriber
-- starts at the running turn's start.
create index session_events_turns on session_events (session_id, seq desc)
  where type in ('turn.started', 'turn.ended');
`,
  },
];
