/**
 * How many leading words name *what* a command does, so that an "always" answer can allow that
 * action without allowing every other one: `git push origin main` → `git push *`, `cat x` → `cat *`.
 * Keys with a space are sub-command prefixes and win over their first word (`npm run build`).
 * Commands that are not listed take arity 1.
 */
const ARITY: Record<string, number> = {};

function define(arity: number, names: string): void {
  for (const name of names.trim().split(/\s*\n\s*|\s*,\s*/)) {
    if (name !== '') ARITY[name] = arity;
  }
}

define(
  1,
  `cat, cd, chmod, chown, chgrp, cp, echo, printf, export, grep, egrep, fgrep, rg, kill, killall, pkill, ls, ll,
   mkdir, rmdir, mv, ps, rm, sleep, tail, touch, head, wc, find, fd, sed, awk, sort, uniq, cut, tr, diff, curl,
   wget, tar, zip, unzip, gzip, gunzip, ssh, scp, rsync, dd, ln, pwd, which, whereis, file, stat, du, df, less,
   more, tee, date, whoami, id, uname, hostname, realpath, readlink, dirname, basename, jq, yq, tree, open,
   xdg-open, man, true, false, test, seq, md5sum, sha256sum, shasum, base64, xxd, od, hexdump, strings, patch,
   clear, history, top, htop, lsof, netstat, ss, ping, dig, nslookup, host, ifconfig, ip, mount, umount, truncate`,
);
define(
  2,
  `git, npm, pnpm, yarn, bun, deno, npx, docker, podman, cargo, rustup, kubectl, pip, pip3, pipx, uv, poetry,
   make, go, terraform, helm, systemctl, journalctl, launchctl, psql, mysql, sqlite3, redis-cli, mongosh, brew,
   apt, apt-get, dnf, yum, pacman, apk, snap, gem, bundle, composer, mvn, gradle, dotnet, swift, flutter,
   dart, mix, rails, rake, nix, vagrant, ansible, pulumi, serverless, firebase, vercel, netlify, heroku, fly,
   wrangler, tsc, vite, vitest, jest, eslint, prettier, biome, turbo, nx, lerna, changeset, corepack, nvm,
   volta, conda, mamba, hatch, pdm, tox, pytest, ruff, black, mypy, cmake, ninja, bazel, meson, sbt, stack,
   cabal, opam, dune, zig, just, task, gh-actions, minikube, kind, k3d, skaffold, tilt, istioctl, oc, virsh`,
);
define(
  3,
  `aws, az, gcloud, gh, glab, doctl, linode-cli, hcloud, scw, ibmcloud, oci,
   npm run, npm exec, pnpm run, pnpm exec, pnpm dlx, yarn run, yarn dlx, bun run, bun x, deno task, deno run,
   docker compose, docker image, docker container, docker network, docker volume, docker buildx,
   docker-compose exec, podman compose,
   git remote, git stash, git config, git submodule, git worktree, git lfs, git notes, git bisect,
   cargo run, cargo make, go mod, go tool, kubectl rollout, kubectl config, kubectl create, kubectl get,
   kubectl describe, kubectl delete, kubectl apply, kubectl logs, kubectl exec,
   terraform workspace, terraform state, vault kv, vault secrets, helm repo, uv run, uv pip, uv tool,
   poetry run, pipx run, conda env, nix profile, dotnet ef, rails generate, mix phx`,
);

/**
 * Commands that run other programs or code given as data. "Always" for them is never a blanket
 * pattern (`bash *` would allow everything): only the exact command line is saved.
 */
export const EXACT_ONLY_COMMANDS: ReadonlySet<string> = new Set(
  `bash sh zsh dash ksh mksh fish csh tcsh busybox env sudo doas su pkexec runuser xargs eval exec command builtin
   nohup nice renice timeout time stdbuf ionice chroot unshare nsenter setsid flock watch parallel script
   strace ltrace gdb ssh python python2 python3 pypy pypy3 node nodejs deno bun tsx ts-node perl ruby php lua
   luajit Rscript osascript pwsh powershell tclsh wish expect awk gawk mawk nawk jshell irb ipython
   source . npx pnpx dlx uvx bunx coproc trap unbuffer caffeinate catchsegv systemd-run firejail proxychains
   proxychains4 torsocks taskset numactl prlimit sg let chrt valgrind fakeroot setpriv chpst xvfb-run dbus-run-session
   setarch linux32 linux64 entr rlwrap sem`
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/** The number of leading words that name the action of `words` (a command's static words). */
export function commandArity(words: readonly string[]): number {
  for (let length = Math.min(3, words.length); length >= 1; length -= 1) {
    const arity = ARITY[words.slice(0, length).join(' ')];
    if (arity !== undefined) return arity;
  }
  return 1;
}

/** Shell builtins and common programs that never run their arguments as a command. */
const PLAIN_COMMANDS = new Set(
  `echo printf cd pushd popd dirs test [ [[ true false : read mapfile readarray getopts let set unset shift return exit
   break continue wait jobs fg bg disown umask ulimit type hash help history alias unalias export declare typeset local
   readonly shopt caller compgen complete enable logout suspend times kill`
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/**
 * Whether `name` is a program Molf knows that does not run its arguments as a command line: its
 * arguments are never probed for hidden commands (`git rm x` is git's, not rm).
 */
export function isKnownPlainCommand(name: string): boolean {
  if (EXACT_ONLY_COMMANDS.has(name)) return false;
  if (PLAIN_COMMANDS.has(name)) return true;
  return Object.hasOwn(ARITY, name);
}
