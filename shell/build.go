package shell

import "strings"

// The rows of build tools and test runners. go test, go run, cargo test,
// cargo run, npm test, npm run X, make and pytest run code the working
// tree holds, which the agent may have written: a grant of their prefix
// is the person's choice to let the agent run its tests and its scripts,
// and the row says so only for that code. What would run code from
// elsewhere (a program named in a flag, a package fetched and run, a
// config that names a runner) is not known: go install, go generate,
// cargo install, npm exec, npm x, npx, npm install (its dependencies'
// install scripts) leave an exact grant at most.

// go: -exec runs the test or program binary under a program it names,
// -toolexec runs every tool of the build under one, -vettool is the vet
// program, -ldflags=-extld names the linker, and go env -w writes GOFLAGS
// (-toolexec=…) that later builds run. A flag that writes a file (-o,
// -coverprofile) is known only with a relative path in the working tree.
var goCmd = &knownCmd{
	style: goflag,
	safe:  flags(`-C= -h -help`),
	subs: map[string]*knownCmd{
		"build": goSub(goBuild),
		"test":  goSub(goBuild + " " + goTest),
		"run":   goSub(goBuild),
		"vet":   goSub(goBuild),
		"list": goSub(goBuild + ` -json? -f= -m -u -versions -deps -test -e -export -find -compiled -retracted
			-reuse=`),
		"fmt":     goSub(`-n -x -mod=`),
		"version": goSub(`-m -v -json`),
		"doc":     goSub(`-all -c -cmd -short -src -u`),
		"clean":   goSub(`-cache -testcache -modcache -fuzzcache -i -n -r -x`),
		"env":     {style: goflag, safe: flags(`-json -changed`), runs: []string{"-w", "-u"}},
		"mod": {style: goflag, subs: map[string]*knownCmd{
			"tidy":     goSub(`-v -e -x -go= -compat= -diff`),
			"download": goSub(`-json -x -reuse=`),
			"graph":    goSub(`-go= -x`),
			"why":      goSub(`-m -vendor`),
			"verify":   goSub(``),
			"init":     goSub(``),
		}},
	},
}

var goRuns = []string{"-exec", "-toolexec", "-vettool"}

// goBuild are the build flags; goTest go test's own (-args ends them:
// what follows is the test binary's).
const (
	goBuild = `-a -n -p= -race -msan -asan -cover -covermode= -coverpkg= -v -work -x -asmflags= -buildmode=
		-buildvcs= -gcflags= -ldflags= -linkshared -mod= -modcacherw -modfile= -pgo= -pkgdir= -tags= -trimpath
		-o= -json`
	goTest = `-c -run= -skip= -bench= -benchtime= -benchmem -count= -cpu= -failfast -fullpath -fuzz= -fuzztime=
		-fuzzminimizetime= -list= -parallel= -short -shuffle= -timeout= -vet= -coverprofile= -cpuprofile=
		-memprofile= -memprofilerate= -blockprofile= -blockprofilerate= -mutexprofile= -mutexprofilefraction=
		-trace= -outputdir= -args`
)

func goSub(safe string) *knownCmd {
	return &knownCmd{style: goflag, safe: flags(safe), runs: goRuns, value: goValue}
}

// goValue: the linker -ldflags names (-extld, -extldflags run it) runs;
// a file a flag writes must be in the working tree.
func goValue(flag, v string) verdict {
	if flag == "-ldflags" && strings.Contains(v, "extld") {
		return runs
	}
	return localPath("-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile", "-mutexprofile",
		"-trace", "-outputdir")(flag, v)
}

// cargo: --config sets any configuration (target.x.runner runs a
// program), -Z unstable options; a subcommand it does not know may be a
// cargo-X program or an alias. Words after "--" go to the test binary, the
// program, or rustfmt and clippy: data.
var cargoCmd = &knownCmd{
	runs: cargoRuns,
	safe: flags(`-q -v -V -h --quiet --verbose --version --help --list --color= --frozen --locked --offline`),
	subs: map[string]*knownCmd{
		"build": cargoSub(cargoBuild), "b": cargoSub(cargoBuild),
		"check": cargoSub(cargoBuild), "c": cargoSub(cargoBuild),
		"test": cargoSub(cargoBuild + " --no-run --no-fail-fast --doc"), "t": cargoSub(cargoBuild + " --no-run --no-fail-fast --doc"),
		"bench": cargoSub(cargoBuild + " --no-run --no-fail-fast"),
		"run":   cargoSub(cargoBuild), "r": cargoSub(cargoBuild),
		"clippy":   cargoSub(cargoBuild + " --no-deps"),
		"doc":      cargoSub(cargoBuild + " --no-deps --document-private-items"),
		"fmt":      cargoSub(`-p= --package= --all --check --manifest-path= --message-format=`),
		"tree":     cargoSub(`-p= -i= -e= --package= --workspace --invert= --edges= --depth= --prefix= --no-dedupe -d --duplicates --charset= --format= --features= -F= --all-features --no-default-features --target= --manifest-path=`),
		"metadata": cargoSub(`--format-version= --no-deps --features= -F= --all-features --no-default-features --filter-platform= --manifest-path=`),
		"clean":    cargoSub(`-p= --package= --release --profile= --target= --target-dir= --doc -n --dry-run --manifest-path=`),
	},
}

var cargoRuns = []string{"--config", "-Z"}

const cargoBuild = `-p= -F= -j= -r --package= --workspace --all --exclude= --lib --bins --bin= --examples --example=
	--tests --test= --benches --bench= --all-targets --features= --all-features --no-default-features --release
	--profile= --target= --target-dir= --manifest-path= --message-format= --jobs= --keep-going --timings?
	--ignore-rust-version --future-incompat-report --quiet --verbose -q -v --color= --frozen --locked --offline`

func cargoSub(safe string) *knownCmd {
	return &knownCmd{safe: flags(safe), runs: cargoRuns}
}

// npm, pnpm and yarn: test and run run the package's own scripts, with
// the words after "--" as their arguments. --script-shell and
// --node-options name what runs them; npm's other config flags
// (--userconfig, any --key=value) are not known.
var npmRuns = []string{"--script-shell", "--node-options", "--userconfig", "--globalconfig", "--shell"}

const npmFlags = `-s -q -w= --silent --quiet --if-present --ignore-scripts --workspace= --workspaces
	--include-workspace-root --json --loglevel= --prefix= --no-color --color=`

var npmCmd = pkgRow(npmFlags, map[string]string{
	"test": "", "t": "", "tst": "", "run": "", "run-script": "", "rum": "", "urn": "", "start": "", "stop": "",
	"ls": "--all --long -a -l --depth= --omit= --include=", "list": "--all --long -a -l --depth= --omit= --include=",
	"outdated": "--all --long -a -l", "why": "", "explain": "", "view": "", "info": "",
})

var pnpmCmd = pkgRow(`-s -r -w -F= -C= --silent --recursive --workspace-root --filter= --dir= --parallel
	--stream --if-present --reporter= --json --no-color --color`, map[string]string{
	"test": "", "t": "", "run": "", "start": "", "ls": "--depth= --long --prod --dev", "list": "--depth= --long --prod --dev",
	"outdated": "--long", "why": "",
})

var yarnCmd = pkgRow(`-s --silent --json --cwd= --no-color`, map[string]string{
	"test": "", "run": "", "start": "", "list": "--depth= --pattern=", "why": "", "info": "", "outdated": "",
})

// pkgRow is the row of a package manager: its global flags, and each
// subcommand's own.
func pkgRow(global string, subs map[string]string) *knownCmd {
	k := &knownCmd{runs: npmRuns, safe: flags(global), subs: map[string]*knownCmd{}}
	for sub, own := range subs {
		k.subs[sub] = &knownCmd{runs: npmRuns, safe: k.safe.plus(own)}
	}
	return k
}

// pytest: -p loads a plugin module, -c and -o name the ini that may add
// options (addopts = -p …), -W imports a warning category's module, and
// --basetemp empties the directory it names before the run.
var pytestCmd = &knownCmd{
	runs: []string{"-p", "-c", "-o", "--override-ini", "--config-file", "-W", "--pythonwarnings", "--basetemp",
		"--confcutdir", "--pdbcls", "--debug"},
	safe: flags(`-q -v -x -s -l -h -V -k= -m= -n= -r= --quiet --verbose --exitfirst --maxfail= --lf --ff --nf --sw
		--sw-skip --last-failed --failed-first --new-first --stepwise --stepwise-skip --co --collect-only
		--tb= --showlocals --full-trace --durations= --durations-min= --color= --code-highlight= --disable-warnings
		--strict-markers --strict-config --strict --runxfail --no-header --no-summary --capture= --setup-show
		--setup-only --setup-plan --deselect= --ignore= --ignore-glob= --rootdir= --import-mode= --doctest-modules
		--cov? --cov-report= --cov-branch --cov-fail-under= --cache-clear --cache-show? --fixtures --fixtures-per-test
		--markers --lfnf= --last-failed-no-failures= --timeout= --junitxml= --junit-xml= --verbosity= --keep-duplicates
		--continue-on-collection-errors --help --version`),
	value: localPath("--junitxml", "--junit-xml"),
}
