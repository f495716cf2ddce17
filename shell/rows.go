package shell

// The rows of the commands that read files and print: their operands are
// paths, patterns and text, data all; their flags below run nothing and
// write nothing. A flag not listed (GNU and BSD have more) leaves only an
// exact grant.

var lsCmd = &knownCmd{safe: flags(`-a -A -b -B -c -C -d -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q
	-r -R -s -S -t -u -U -v -x -X -Z -1 -I= -T= -w=
	--all --almost-all --escape --ignore-backups --directory --classify --file-type --no-group
	--human-readable --si --dereference-command-line --dereference --inode --kibibytes --literal --numeric-uid-gid
	--hide-control-chars --quote-name --reverse --recursive --size --context --group-directories-first
	--full-time --author --color? --hyperlink? --indicator-style= --block-size= --format= --hide= --ignore=
	--quoting-style= --sort= --time= --time-style= --tabsize= --width= --show-control-chars --help --version`)}

var catCmd = &knownCmd{safe: flags(`-A -b -e -E -n -s -t -T -u -v -l
	--show-all --number-nonblank --number --squeeze-blank --show-ends --show-tabs --show-nonprinting
	--help --version`)}

var headCmd = &knownCmd{safe: flags(`-n= -c= -q -v -z --lines= --bytes= --quiet --silent --verbose
	--zero-terminated --help --version ` + digits)}

// tail --pid only watches a process; -f follows the file until stopped.
var tailCmd = &knownCmd{safe: flags(`-n= -c= -f -F -q -v -z -r -s= --lines= --bytes= --follow? --retry
	--pid= --sleep-interval= --max-unchanged-stats= --quiet --silent --verbose --zero-terminated
	--help --version ` + digits)}

// wc --files0-from reads the names of the files it counts.
var wcCmd = &knownCmd{safe: flags(`-c -m -l -w -L --bytes --chars --lines --words --max-line-length
	--files0-from= --total= --help --version`)}

// grep -f reads patterns from a file: data.
var grepCmd = &knownCmd{safe: flags(`-E -F -G -P -e= -f= -i -y -v -w -x -c -l -L -o -q -s -n -h -H -b -r -R
	-a -I -z -Z -T -U -A= -B= -C= -m= -d= -D=
	--extended-regexp --fixed-strings --basic-regexp --perl-regexp --regexp= --file= --ignore-case
	--no-ignore-case --invert-match --word-regexp --line-regexp --count --files-with-matches
	--files-without-match --only-matching --quiet --silent --no-messages --line-number --no-line-number
	--with-filename --no-filename --byte-offset --recursive --dereference-recursive --text --initial-tab
	--null --null-data --line-buffered --color? --colour? --after-context= --before-context= --context=
	--max-count= --include= --exclude= --exclude-dir= --exclude-from= --label= --binary-files=
	--directories= --devices= --help --version ` + digits)}

// rg: --pre runs a program on each file, --search-zip (-z) runs
// decompressors, --hostname-bin runs the program it names.
var rgCmd = &knownCmd{
	runs: []string{"--pre", "--pre-glob", "--hostname-bin", "--search-zip", "-z"},
	safe: flags(`-i -s -S -v -w -x -c -l -n -N -H -I -u -L -F -U -o -p -q -0 -a -b -h -V -P -.
		-e= -g= -t= -T= -A= -B= -C= -m= -r= -j= -M= -E= -d= -f=
		--ignore-case --case-sensitive --smart-case --invert-match --word-regexp --line-regexp --count
		--count-matches --files-with-matches --files-without-match --line-number --no-line-number
		--with-filename --no-filename --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-parent
		--no-ignore-global --no-ignore-exclude --no-ignore-files --hidden --no-hidden --follow --fixed-strings
		--multiline --multiline-dotall --only-matching --pretty --quiet --null --text --byte-offset
		--column --no-column --heading --no-heading --vimgrep --json --files --type-list --passthru --stats
		--trim --unrestricted --pcre2 --no-config --no-messages --debug --glob-case-insensitive
		--regexp= --glob= --iglob= --type= --type-not= --after-context= --before-context= --context=
		--max-count= --replace= --threads= --max-columns= --max-columns-preview --encoding= --max-depth=
		--max-filesize= --file= --ignore-file= --sort= --sortr= --color= --colors= --engine=
		--context-separator= --field-match-separator= --path-separator= --help --version`),
}

// fd: --exec and --exec-batch run a command for what it finds.
var fdCmd = &knownCmd{
	runs: []string{"--exec", "-x", "--exec-batch", "-X"},
	safe: flags(`-H -I -u -s -i -g -F -a -l -L -p -0 -1 -q -h -V -e= -t= -E= -d= -c= -j= -S= -o=
		--hidden --no-hidden --no-ignore --no-ignore-vcs --no-ignore-parent --no-global-ignore-file
		--case-sensitive --ignore-case --glob --regex --fixed-strings --absolute-path --relative-path
		--list-details --follow --full-path --print0 --quiet --prune --one-file-system --show-errors
		--strip-cwd-prefix? --extension= --type= --exclude= --max-depth= --min-depth= --exact-depth=
		--color= --threads= --size= --changed-within= --changed-before= --change-newer-than=
		--change-older-than= --newer= --older= --owner= --max-results= --base-directory= --search-path=
		--format= --ignore-file= --path-separator= --help --version`),
}

// sort: --compress-program runs a program, --output writes the file it
// names.
var sortCmd = &knownCmd{
	runs: []string{"--compress-program", "--output", "-o"},
	safe: flags(`-b -d -f -g -i -M -h -n -R -r -V -c -C -m -s -u -z -k= -t= -S= -T=
		--ignore-leading-blanks --dictionary-order --ignore-case --general-numeric-sort --ignore-nonprinting
		--month-sort --human-numeric-sort --numeric-sort --random-sort --reverse --version-sort --check?
		--merge --stable --unique --zero-terminated --debug --key= --field-separator= --buffer-size=
		--temporary-directory= --parallel= --files0-from= --random-source= --sort= --batch-size=
		--help --version`),
}

// uniq: a second operand is the file it writes.
var uniqCmd = &knownCmd{
	safe: flags(`-c -d -D -u -i -z -f= -s= -w= --count --repeated --all-repeated? --group? --unique
		--ignore-case --zero-terminated --skip-fields= --skip-chars= --check-chars= --help --version`),
	operands: func(ops []arg, _ []string) verdict { return runsWhen(len(ops) > 1) },
}

var diffCmd = &knownCmd{safe: flags(`-a -b -B -c -d -e -E -i -n -N -p -P -q -r -s -t -T -u -w -y -Z -U= -C= -W= -x= -X= -I= -F= -S=
	--text --ignore-space-change --ignore-blank-lines --ignore-all-space --ignore-case --ignore-tab-expansion
	--ignore-trailing-space --strip-trailing-cr --brief --report-identical-files --recursive --new-file
	--unidirectional-new-file --side-by-side --left-column --suppress-common-lines --show-c-function
	--expand-tabs --initial-tab --minimal --speed-large-files --normal --no-dereference --unified?
	--context? --color? --width= --exclude= --exclude-from= --ignore-matching-lines= --label=
	--show-function-line= --starting-file= --from-file= --to-file= --tabsize= --palette=
	--horizon-lines= --help --version`)}

// jq: its filter runs in jq, which has no way to run a command or write a
// file; --arg and the like take two words, -f and -L name jq code or
// modules, data to the shell.
var jqCmd = &knownCmd{safe: flags(`-r -j -a -c -n -e -s -S -C -M -R -h -V --raw-output --raw-output0
	--join-output --ascii-output --compact-output --null-input --exit-status --slurp --sort-keys
	--color-output --monochrome-output --raw-input --tab --stream --stream-errors --seq --unbuffered
	--args --jsonargs --indent= -f= --from-file= -L= --arg== --argjson== --slurpfile== --rawfile==
	--help --version --build-configuration`)}

// echo and pwd print; echo's operands are its text.
var (
	echoCmd = &knownCmd{safe: flags(`-n -e -E`)}
	pwdCmd  = &knownCmd{safe: flags(`-L -P`)}
)
