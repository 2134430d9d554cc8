import { randomUUID } from 'node:crypto';
import { createSilentLogger } from '@molf/logging';
import { readDefaultPermissionsText } from '@molf/permissions/default-file';
import type { PermissionsProblem, WorkerId } from '@molf/protocol';
import { describe, expect, it } from 'vitest';
import type { StateDocuments } from '../state/index.ts';
import { backendTitle, type StatePlace, stateBackends } from '../testing/state-backends.ts';
import { waitFor } from '../testing/test-link.ts';
import { createPermissionsStore, type PermissionsStore, permissionsDocument } from './permissions-store.ts';
import { createWorkerRulesWatch } from './watch-worker-rules.ts';

const logger = createSilentLogger();

/** One server's permissions store over the place, with what it reported. */
type Server = {
  documents: StateDocuments;
  store: PermissionsStore;
  problems: PermissionsProblem[];
  valid: WorkerId[];
};

async function openServer(place: StatePlace): Promise<Server> {
  const { documents } = await place.open();
  const problems: PermissionsProblem[] = [];
  const valid: WorkerId[] = [];
  const store = createPermissionsStore({
    documents,
    logger,
    onProblem: (problem) => problems.push(problem),
    onValid: (workerId) => valid.push(workerId),
  });
  return { documents, store, problems, valid };
}

const newWorker = () => randomUUID() as WorkerId;
const patternsOf = (rules: ReadonlyArray<{ tool: string; pattern: string; action: string }>, tool: string) =>
  rules.filter((rule) => rule.tool === tool && rule.action === 'allow').map((rule) => rule.pattern);

const RULES = '{\n  // kept\n  "*": "ask",\n  "shell_exec": { "git status": "allow" }\n}\n';
const MISSING_COMMA = '{\n  "*": "ask"\n  "read_file": "allow"\n}';

for (const backend of stateBackends()) {
  const suite = backend.unavailable === undefined ? describe : describe.skip;
  suite(backendTitle('permissions store', backend), () => {
    it('seeds the commented default once, even when two servers load a new worker at the same moment', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openServer(place), await openServer(place)];
      const workerId = newWorker();
      const [first, second] = await Promise.all([one.store.load(workerId), two.store.load(workerId)]);
      expect(first.problem).toBeUndefined();
      expect(second.rules).toEqual(first.rules);
      expect(await one.documents.read(permissionsDocument(workerId))).toBe(readDefaultPermissionsText());
      expect(one.store.pathOf(workerId)).toBe(one.documents.where(permissionsDocument(workerId)));
      if (place.dataDir !== undefined) expect(one.store.pathOf(workerId)).toContain(place.dataDir);
    });

    it('never replaces rules saved before the first load with the defaults', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      await server.documents.write(permissionsDocument(workerId), RULES);
      expect(patternsOf((await server.store.load(workerId)).rules, 'shell_exec')).toEqual(['git status']);
      expect(await server.documents.read(permissionsDocument(workerId))).toBe(RULES);
    });

    it('keeps the last good rules while the document is broken, reports it once per version, and says when it parses again', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      await server.store.writeText(workerId, RULES);
      expect(patternsOf((await server.store.load(workerId)).rules, 'shell_exec')).toEqual(['git status']);

      await server.documents.write(permissionsDocument(workerId), MISSING_COMMA);
      const broken = await server.store.load(workerId);
      expect(patternsOf(broken.rules, 'shell_exec')).toEqual(['git status']);
      const expected = {
        workerId,
        file: server.store.pathOf(workerId),
        line: 3,
        column: 3,
        message: 'a comma is missing between two entries',
        fallback: 'last_good_rules',
      };
      expect(broken.problem).toEqual(expected);
      await server.store.load(workerId);
      expect(server.problems).toEqual([expected]);

      await server.store.writeText(workerId, '{ "*": "ask", "read_file": "allow" }');
      const fixed = await server.store.load(workerId);
      expect(fixed.problem).toBeUndefined();
      expect(patternsOf(fixed.rules, 'read_file')).toEqual(['*']);
      expect(server.valid).toEqual([workerId]);
    });

    it('asks everything when the document was broken before any rules were read', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      await server.documents.write(permissionsDocument(workerId), MISSING_COMMA);
      expect(await server.store.load(workerId)).toMatchObject({
        rules: [],
        problem: { fallback: 'ask_everything', line: 3 },
      });
    });

    it('treats a document deleted after it was read as a problem, keeping its rules, not as a reason to seed the defaults', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      await server.store.writeText(workerId, RULES);
      await server.store.load(workerId);
      await server.documents.remove(permissionsDocument(workerId));
      const loaded = await server.store.load(workerId);
      expect(patternsOf(loaded.rules, 'shell_exec')).toEqual(['git status']);
      expect(loaded.problem).toMatchObject({
        fallback: 'last_good_rules',
        message: expect.stringContaining('deleted'),
      });
      expect(await server.documents.read(permissionsDocument(workerId))).toBeUndefined();
    });

    it('refuses a text that does not parse, with its line and column, and a write from an older version', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      const shown = await server.store.readText(workerId);
      expect(shown.text).toBe(readDefaultPermissionsText());
      await expect(server.store.writeText(workerId, MISSING_COMMA)).rejects.toMatchObject({
        code: 'permissions_invalid',
        message: expect.stringContaining('line 3, column 3'),
      });
      await server.store.appendAllow(workerId, { tool: 'shell_exec', patterns: ['make *'] });
      await expect(server.store.writeText(workerId, RULES, { baseVersion: shown.version })).rejects.toMatchObject({
        code: 'conflict',
      });
      const current = await server.store.readText(workerId);
      expect(current.text).toContain('"make *": "allow"');
      await server.store.writeText(workerId, RULES, { baseVersion: current.version });
      expect((await server.store.readText(workerId)).text).toBe(RULES);
    });

    it('adds "always" rules keeping comments, and removes a grant by its id', async () => {
      await using place = await backend.prepare();
      const server = await openServer(place);
      const workerId = newWorker();
      await server.store.writeText(workerId, RULES);
      const added = await server.store.appendAllow(workerId, {
        tool: 'shell_exec',
        patterns: ['npm test', 'git status'],
        grants: new Map([['npm test', { grant: 'g_npm' }]]),
      });
      expect(added).toEqual(['npm test']);
      const text = (await server.store.readText(workerId)).text;
      expect(text).toContain('// kept');
      expect(text).toContain('"grant": "g_npm"');

      expect(await server.store.removeGrant(workerId, 'g_npm')).toMatchObject({ pattern: 'npm test' });
      const after = (await server.store.readText(workerId)).text;
      expect(after).not.toContain('npm test');
      expect(after).toContain('// kept');
      await expect(server.store.removeGrant(workerId, 'g_npm')).rejects.toMatchObject({ code: 'grant_not_found' });
    });

    it('loses no rule when two servers add "always" rules to one worker at the same moment', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openServer(place), await openServer(place)];
      const workerId = newWorker();
      await one.store.writeText(workerId, RULES);
      const patterns = Array.from({ length: 6 }, (_, index) => `make target-${index}`);
      await Promise.all(
        patterns.map((pattern, index) =>
          (index % 2 === 0 ? one : two).store.appendAllow(workerId, { tool: 'shell_exec', patterns: [pattern] }),
        ),
      );
      const text = (await one.documents.read(permissionsDocument(workerId))) ?? '';
      for (const pattern of patterns) expect(text).toContain(`"${pattern}": "allow"`);
      expect(text).toContain('// kept');
    });

    it("reaches the other server's watch and its next load when one server saves the rules", async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openServer(place), await openServer(place)];
      const workerId = newWorker();
      await one.store.writeText(workerId, RULES);
      expect(patternsOf((await two.store.load(workerId)).rules, 'read_file')).toEqual([]);
      let changes = 0;
      const stop = two.store.watch(workerId, () => {
        changes += 1;
      });
      try {
        await one.store.writeText(workerId, '{ "*": "ask", "read_file": "allow" }');
        await waitFor(() => changes > 0, { what: "the second server's watch" });
        expect(patternsOf((await two.store.load(workerId)).rules, 'read_file')).toEqual(['*']);
      } finally {
        stop();
      }
    });

    it('has the other server report a document broken there, keeping its last good rules, and a new server ask everything', async () => {
      await using place = await backend.prepare();
      const [one, two] = [await openServer(place), await openServer(place)];
      const workerId = newWorker();
      await one.store.writeText(workerId, RULES);
      await two.store.load(workerId);
      const watch = createWorkerRulesWatch({ store: two.store, logger });
      try {
        watch.connected(workerId);
        // Written past the store's checks, as a person with the file or the database's rows might.
        await one.documents.write(permissionsDocument(workerId), MISSING_COMMA);
        await waitFor(() => two.problems.length > 0, { what: 'the problem reported by the second server' });
        expect(two.problems).toEqual([
          expect.objectContaining({ workerId, line: 3, column: 3, fallback: 'last_good_rules' }),
        ]);
        expect(patternsOf((await two.store.load(workerId)).rules, 'shell_exec')).toEqual(['git status']);

        const three = await openServer(place);
        expect(await three.store.load(workerId)).toMatchObject({ rules: [], problem: { fallback: 'ask_everything' } });
        expect(three.problems).toHaveLength(1);
      } finally {
        watch.close();
      }
    });
  });
}
