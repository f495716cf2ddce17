package shell

import "strings"

// git: -c and --config-env set any configuration (core.fsmonitor,
// core.pager, alias.x=!cmd: each runs a command), and --exec-path chooses
// where git's own programs come from. The row knows git's everyday
// subcommands, each with the flags it knows run nothing; any other word
// (an alias runs whatever it names, filter-branch, submodule, send-email)
// and any other flag leave only an exact grant, and a flag of gitSubRuns
// (or its abbreviation: git takes --exe for --exec) leaves none. Hooks
// the repository holds (pre-commit, pre-push) run as they would without
// countersign: a grant of git commit is the person's choice to run them.
var gitCmd = &knownCmd{
	runs: gitGlobalRuns,
	safe: gitGlobal,
	subs: gitSubs,
}

var gitGlobalRuns = []string{"-c", "--config-env", "--exec-path"}

var gitGlobal = flags(`-C= --git-dir= --work-tree= --namespace= -P --no-pager -p --paginate --bare
	--no-replace-objects --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs
	--no-optional-locks --no-advice --no-lazy-fetch --version -v --help -h --html-path --man-path --info-path`)

// gitSubRuns are the flags of git subcommands that run a command, open an
// editor, or write a file they name.
var gitSubRuns = map[string][]string{
	"rebase":    {"--exec", "-x", "--interactive", "-i", "--strategy", "-s"},
	"grep":      {"--open-files-in-pager", "-O"},
	"fetch":     {"--upload-pack"},
	"pull":      {"--upload-pack", "--strategy", "-s"},
	"merge":     {"--strategy", "-s", "--edit", "-e"},
	"clone":     {"--upload-pack", "-u", "--config", "-c", "--template"},
	"init":      {"--template"},
	"push":      {"--receive-pack", "--exec"},
	"ls-remote": {"--upload-pack"},
	"log":       {"--output", "--ext-diff", "--textconv"},
	"show":      {"--output", "--ext-diff", "--textconv"},
	"diff":      {"--output", "--ext-diff", "--textconv"},
	"commit":    {"--edit", "-e", "--template", "-t", "--reedit-message", "-c", "--gpg-sign", "-S"},
	"add":       {"--edit", "-e", "--interactive", "-i", "--patch", "-p"},
	"branch":    {"--edit-description"},
	"bisect":    {"run"},
	"config":    {"set", "--add", "--replace-all", "--edit", "-e"},
}

// gitDiffFlags are the flags of the diff family (diff, show, log -p).
const gitDiffFlags = `-p -u -s -U= -z -w -b -a -R -W -M? -C? -B? -D -l= -G= -S= -O= -X? --patch --no-patch
	--unified= --raw --patch-with-raw --stat? --numstat --shortstat --dirstat? --compact-summary --summary
	--name-only --name-status --check --full-index --binary --abbrev? --no-abbrev --color? --no-color
	--color-moved? --no-color-moved --word-diff? --word-diff-regex= --color-words? --no-renames --renames
	--find-renames? --find-copies? --find-copies-harder --irreversible-delete --diff-filter= --relative?
	--no-relative --text --ignore-all-space --ignore-space-change --ignore-space-at-eol --ignore-cr-at-eol
	--ignore-blank-lines --ignore-matching-lines= --ignore-submodules? --minimal --patience --histogram
	--anchored= --diff-algorithm= --indent-heuristic --no-indent-heuristic --function-context --exit-code
	--quiet --no-ext-diff --no-textconv --src-prefix= --dst-prefix= --no-prefix --default-prefix
	--line-prefix= --ita-invisible-in-index --ita-visible-in-index --pickaxe-all --pickaxe-regex
	--stat-width= --stat-name-width= --stat-count= --submodule? --merge-base --cached --staged --no-index
	--find-object= --skip-to= --rotate-to= --output-indicator-new= --output-indicator-old=
	--output-indicator-context=`

// gitLogFlags are the flags of log, show, shortlog, rev-list and reflog.
const gitLogFlags = `-n= -i -E -F -P -g -m -c -L= --max-count= --skip= --since= --after= --until= --before=
	--since-as-filter= --author= --committer= --grep= --grep-reflog= --all-match --invert-grep
	--regexp-ignore-case --basic-regexp --extended-regexp --fixed-strings --perl-regexp --merges
	--no-merges --min-parents= --max-parents= --no-min-parents --no-max-parents --first-parent
	--exclude-first-parent-only --not --all --branches? --tags? --remotes? --glob= --exclude=
	--reflog --alternate-refs --single-worktree --ignore-missing --bisect --walk-reflogs --merge
	--boundary --simplify-by-decoration --full-history --dense --sparse --simplify-merges
	--ancestry-path? --show-pulls --date-order --author-date-order --topo-order --reverse --no-walk?
	--do-walk --format= --pretty? --oneline --abbrev-commit --no-abbrev-commit --encoding= --expand-tabs?
	--no-expand-tabs --notes? --no-notes --show-notes? --relative-date --date= --parents --children
	--left-right --left-only --right-only --cherry-mark --cherry-pick --cherry --graph --show-linear-break?
	--decorate? --no-decorate --decorate-refs= --decorate-refs-exclude= --source --use-mailmap
	--no-use-mailmap --mailmap --no-mailmap --full-diff --log-size --follow --no-follow --cc --dd
	--remerge-diff --diff-merges= --no-diff-merges --combined-all-paths --count --objects --in-commit-order
	--no-object-names --timestamp --clear-decorations --show-origin ` + digits

var gitSubs = map[string]*knownCmd{
	"status": gitSub("status", `-s -b -v -z -u? --short --branch --show-stash --porcelain? --long --verbose
		--untracked-files? --ignore-submodules? --ignored? --no-ignored --column? --no-column --ahead-behind
		--no-ahead-behind --renames --no-renames --find-renames?`),
	"diff":     gitSub("diff", gitDiffFlags),
	"log":      gitSub("log", gitDiffFlags+" "+gitLogFlags),
	"show":     gitSub("show", gitDiffFlags+" "+gitLogFlags),
	"shortlog": gitSub("shortlog", gitLogFlags+" -s -e -w? --summary --numbered --email --committer --group="),
	"rev-list": gitSub("rev-list", gitLogFlags),
	"reflog":   gitSub("reflog", gitLogFlags),
	"blame": gitSub("blame", `-L= -l -t -s -e -w -f -n -p -c -b -M? -C? --root --show-stats --porcelain
		--line-porcelain --incremental --abbrev= --date= --since= --first-parent --reverse= --contents=
		--ignore-rev= --ignore-revs-file= --color-lines --color-by-age --progress --no-progress
		--show-name --show-number --show-email --minimal --encoding=`),
	"branch": gitSub("branch", `-a -r -l -v -i -t -q --all --remotes --list --verbose --merged? --no-merged?
		--contains? --no-contains? --points-at= --sort= --format= --show-current --color? --no-color
		--column? --no-column --abbrev= --no-abbrev --ignore-case --omit-empty --track? --no-track --quiet`),
	"tag": gitSub("tag", `-l -n? -i --list --sort= --contains? --no-contains? --merged? --no-merged?
		--points-at= --format= --column? --no-column --ignore-case --omit-empty --color?`),
	"add": gitSub("add", `-A -u -n -v -f -N --all --update --no-all --ignore-removal --no-ignore-removal
		--dry-run --verbose --force --intent-to-add --ignore-errors --ignore-missing --renormalize --sparse
		--refresh --chmod= --pathspec-from-file= --pathspec-file-nul`),
	"commit": gitSub("commit", `-m= -F= -a -s -n -q -v -o -z -C= --message= --file= --all --amend --no-edit
		--signoff --no-signoff --no-verify --verify --allow-empty --allow-empty-message --quiet --verbose
		--author= --date= --fixup= --squash= --reuse-message= --reset-author --only --include --dry-run
		--short --branch --porcelain --long --null --cleanup= --trailer= --no-gpg-sign --status --no-status
		--untracked-files? --pathspec-from-file= --pathspec-file-nul`),
	"push": gitSub("push", `-u -f -d -n -q -v -o= --set-upstream --force --force-with-lease? --no-force-with-lease
		--force-if-includes --no-force-if-includes --tags --follow-tags --no-follow-tags --all --branches
		--mirror --delete --prune --dry-run --quiet --verbose --progress --no-progress --porcelain
		--no-verify --verify --atomic --no-atomic --push-option= --thin --no-thin --ipv4 --ipv6 -4 -6`),
	"pull": gitSub("pull", `-q -v -r? -n -p -t -a -j= --quiet --verbose --rebase? --no-rebase --ff --no-ff
		--ff-only --autostash --no-autostash --squash --no-squash --commit --no-commit --no-edit --stat
		--no-stat --log? --no-log --signoff --no-signoff --no-verify --all --tags --no-tags --prune --depth=
		--deepen= --shallow-since= --unshallow --update-shallow --progress --no-progress --jobs=
		--allow-unrelated-histories --ipv4 --ipv6 -4 -6`),
	"fetch": gitSub("fetch", `-a -f -k -m -n -p -P -q -t -v -j= --all --append --atomic --depth= --deepen=
		--shallow-since= --shallow-exclude= --unshallow --update-shallow --dry-run --force --keep --multiple
		--prune --prune-tags --no-tags --tags --refetch --quiet --verbose --progress --no-progress
		--jobs= --set-upstream --filter= --no-write-fetch-head --write-fetch-head --porcelain
		--negotiation-tip= --negotiate-only --ipv4 --ipv6 -4 -6`),
	"checkout": gitSub("checkout", `-b= -B= -t -f -q -m -l --track? --no-track --force --quiet --merge --detach
		--orphan= --ours --theirs --conflict= --overlay --no-overlay --progress --no-progress
		--ignore-other-worktrees --guess --no-guess --ignore-skip-worktree-bits --pathspec-from-file=
		--pathspec-file-nul`),
	"switch": gitSub("switch", `-c= -C= -d -t -f -m -q --create= --force-create= --detach --track? --no-track
		--force --discard-changes --merge --orphan= --quiet --guess --no-guess --conflict= --progress
		--no-progress --ignore-other-worktrees`),
	"restore": gitSub("restore", `-s= -S -W -q -m --source= --staged --worktree --quiet --progress --no-progress
		--ours --theirs --merge --conflict= --ignore-unmerged --overlay --no-overlay --ignore-skip-worktree-bits
		--pathspec-from-file= --pathspec-file-nul`),
	"stash": gitSub("stash", `-m= -u -a -k -q -p? --message= --include-untracked --only-untracked --all
		--keep-index --no-keep-index --index --quiet --staged`),
	"merge": gitSub("merge", `-m= -n -q -v --ff --no-ff --ff-only --squash --no-squash --commit --no-commit
		--no-edit --stat --no-stat --log? --no-log --abort --continue --quit --autostash --no-autostash
		--allow-unrelated-histories --no-verify --verify --signoff --no-signoff --quiet --verbose --progress
		--no-progress --into-name=`),
	"rebase": gitSub("rebase", `-q -v -f --onto= --continue --abort --skip --quit --autostash --no-autostash
		--autosquash --no-autosquash --keep-base --update-refs --no-update-refs --root --rebase-merges?
		--no-rebase-merges --committer-date-is-author-date --ignore-date --reset-author-date --quiet --verbose
		--stat --no-stat --no-verify --verify --force-rebase --no-ff --fork-point --no-fork-point --signoff
		--empty= --keep-empty --no-keep-empty --reapply-cherry-picks --no-reapply-cherry-picks`),
	"cherry-pick": gitSub("cherry-pick", `-n -x -s -m= --no-commit --signoff --mainline= --ff --allow-empty
		--allow-empty-message --keep-redundant-commits --empty= --continue --abort --skip --quit`),
	"revert": gitSub("revert", `-n -s -m= --no-commit --no-edit --signoff --mainline= --continue --abort
		--skip --quit --reference`),
	"reset": gitSub("reset", `-q -N --soft --mixed --hard --merge --keep --quiet --no-quiet --intent-to-add
		--no-refresh --refresh --pathspec-from-file= --pathspec-file-nul`),
	"rm": gitSub("rm", `-r -f -n -q --force --dry-run --cached --quiet --ignore-unmatch --sparse
		--pathspec-from-file= --pathspec-file-nul`),
	"mv":    gitSub("mv", `-f -k -n -v --force --dry-run --verbose --sparse`),
	"clean": gitSub("clean", `-n -f -d -x -X -q -e= --dry-run --force --quiet --exclude=`),
	"ls-files": gitSub("ls-files", `-c -d -m -o -i -s -u -k -z -t -v -f -x= -X= --cached --deleted --modified
		--others --ignored --stage --unmerged --killed --directory --no-empty-directory --exclude=
		--exclude-from= --exclude-per-directory= --exclude-standard --error-unmatch --full-name
		--recurse-submodules --abbrev? --eol --deduplicate --format= --sparse --with-tree=`),
	"ls-tree": gitSub("ls-tree", `-r -d -t -l -z --long --name-only --name-status --object-only --full-name
		--full-tree --abbrev? --format=`),
	"grep": gitSub("grep", `-i -I -w -v -h -H -E -G -P -F -n -l -L -z -o -c -p -W -a -q -r -e= -f= -A= -B= -C= -m=
		--ignore-case --word-regexp --invert-match --full-name --extended-regexp --basic-regexp
		--perl-regexp --fixed-strings --line-number --column --files-with-matches --name-only
		--files-without-match --null --only-matching --count --color? --no-color --break --heading
		--show-function --function-context --threads= --and --or --not --all-match --quiet --cached
		--untracked --no-index --exclude-standard --no-exclude-standard --recurse-submodules
		--max-depth= --text --recursive --no-recursive --max-count= --after-context= --before-context=
		--context= `+digits),
	"rev-parse": gitSub("rev-parse", `-q --verify --quiet --short? --abbrev-ref? --symbolic --symbolic-full-name
		--show-toplevel --show-prefix --show-cdup --show-superproject-working-tree --git-dir --git-common-dir
		--absolute-git-dir --is-inside-git-dir --is-inside-work-tree --is-bare-repository
		--is-shallow-repository --all --branches? --tags? --remotes? --glob= --default= --revs-only
		--no-revs --flags --no-flags --sq --not --local-env-vars --resolve-git-dir= --show-object-format?
		--path-format= --git-path=`),
	"describe": gitSub("describe", `--tags --all --always --long --exact-match --first-parent --contains
		--dirty? --broken? --abbrev= --candidates= --match= --exclude=`),
	"show-ref": gitSub("show-ref", `-d -s -q --head --dereference --hash? --verify --quiet --abbrev? --tags
		--heads --branches --exists`),
	"for-each-ref": gitSub("for-each-ref", `-s -p --count= --sort= --format= --points-at= --merged? --no-merged?
		--contains? --no-contains? --ignore-case --omit-empty --shell --perl --python --tcl --exclude=`),
	"merge-base": gitSub("merge-base", `-a --all --octopus --independent --is-ancestor --fork-point`),
	"cat-file":   gitSub("cat-file", `-t -s -p -e --allow-unknown-type --mailmap --use-mailmap --no-mailmap`),
	"remote":     gitSub("remote", `-v --verbose`),
	"ls-remote": gitSub("ls-remote", `-h -t -q --heads --branches --tags --refs --quiet --exit-code
		--get-url --symref --sort=`),
	"clone": gitSub("clone", `-l -q -v -n -b= -o= -j= --local --no-hardlinks --shared --quiet --verbose
		--progress --no-checkout --bare --mirror --origin= --branch= --depth= --shallow-since=
		--shallow-exclude= --single-branch --no-single-branch --no-tags --tags --filter= --sparse
		--also-filter-submodules --jobs= --reject-shallow --no-reject-shallow`),
	"init": gitSub("init", `-q -b= --quiet --bare --initial-branch= --object-format= --ref-format=`),
	"worktree": gitSub("worktree", `-f -b= -B= -d -n -q -v -z --force --detach --checkout --no-checkout --lock
		--reason= --orphan --porcelain --dry-run --quiet --verbose --expire= --track --no-track --guess-remote`),
	"bisect": {
		runs:     gitSubRuns["bisect"],
		safe:     flags(`--term-old= --term-new= --term-bad= --term-good= --no-checkout --first-parent`),
		operands: func(ops []arg, _ []string) verdict { return runsWhen(len(ops) > 0 && ops[0].text == "run") },
	},
	"config":  {runs: gitSubRuns["config"], custom: gitConfig},
	"version": gitSub("version", `--build-options`),
	"help":    gitSub("help", `-a -g --all --guides --no-verbose --no-external-commands --no-aliases`),
}

// gitSub is the row of a git subcommand: its safe flags, and its runs
// flags from gitSubRuns.
func gitSub(name, safe string) *knownCmd {
	return &knownCmd{safe: flags(safe), runs: gitSubRuns[name]}
}

// gitFlagIs: w is flag r as git's option parser (or GNU getopt_long)
// would read it: --exec, --exe=x, -x, -qx.
func gitFlagIs(w, r string) bool {
	switch {
	case !strings.HasPrefix(r, "-"): // a word: bisect run
		return w == r
	case strings.HasPrefix(r, "--"):
		name, _, _ := strings.Cut(w, "=")
		return strings.HasPrefix(name, "--") && len(name) > 2 && strings.HasPrefix(r, name)
	}
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.IndexByte(w[1:], r[1]) >= 0
}

// gitConfig: git config that only reads (--get, --list, get, list, …)
// is known; one that sets a value may set a command git runs later
// (core.fsmonitor, alias.x), and no grant covers it.
func gitConfig(rest []arg) verdict {
	reads := false
	for _, a := range rest {
		if !a.ok {
			return runs
		}
		for _, r := range gitSubRuns["config"] {
			if gitFlagIs(a.text, r) {
				return runs
			}
		}
		reads = reads || gitConfigRead[a.text]
	}
	return runsWhen(!reads)
}

var gitConfigRead = set("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool",
	"-l", "--list", "get", "list")
