package shell

import "strings"

// known is the command table, by the name commandName gives (SPEC §8): the
// commands whose arguments countersign reads. A stage of a command that is
// not here is covered only by a grant of its exact words. Rows for GNU and
// BSD spellings of one tool (gsed, gtar, gfind, gmake) share it. Each row
// has a test (TestEveryRowTested).
var known = map[string]*knownCmd{
	"find":   findCmd,
	"gfind":  findCmd,
	"sed":    sedCmd,
	"gsed":   sedCmd,
	"tar":    tarCmd,
	"gtar":   tarCmd,
	"rsync":  rsyncCmd,
	"ssh":    sshCmd,
	"scp":    scpCmd,
	"make":   makeCmd,
	"gmake":  makeCmd,
	"git":    gitCmd,
	"go":     goCmd,
	"cargo":  cargoCmd,
	"npm":    npmCmd,
	"pnpm":   pnpmCmd,
	"yarn":   yarnCmd,
	"pytest": pytestCmd,
	"rg":     rgCmd,
	"fd":     fdCmd,
	"fdfind": fdCmd,
	"sort":   sortCmd,
	"ls":     lsCmd,
	"cat":    catCmd,
	"head":   headCmd,
	"tail":   tailCmd,
	"wc":     wcCmd,
	"grep":   grepCmd,
	"egrep":  grepCmd,
	"fgrep":  grepCmd,
	"jq":     jqCmd,
	"diff":   diffCmd,
	"uniq":   uniqCmd,
	"echo":   echoCmd,
	"pwd":    pwdCmd,
}

var findCmd = &knownCmd{
	style: single,
	runs:  []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"},
	safe: flags(`-H -L -P -D= -O0 -O1 -O2 -O3 -E -s -x -d -depth -maxdepth= -mindepth= -mount -xdev -follow
		-noleaf -daystart -ignore_readdir_race -noignore_readdir_race -regextype= -warn -nowarn
		-not -a -and -o -or -true -false -print -print0 -printf= -ls -prune -quit
		-name= -iname= -path= -ipath= -wholename= -iwholename= -lname= -ilname= -regex= -iregex=
		-type= -xtype= -size= -empty -perm= -user= -group= -uid= -gid= -nouser -nogroup -links= -inum=
		-samefile= -fstype= -readable -writable -executable -context=
		-mtime= -mmin= -atime= -amin= -ctime= -cmin= -used= -newer= -anewer= -cnewer= ` + newerXY()),
}

// newerXY are find's -newerXY tests (-newermt, -newerct, …), each with a value.
func newerXY() string {
	var b strings.Builder
	for _, x := range "aBcmt" {
		for _, y := range "aBcmt" {
			b.WriteString(" -newer" + string(x) + string(y) + "=")
		}
	}
	return b.String()
}

// sed: a script's e, w and W commands and the e and w flags of s run a
// command or write a file; -i edits the files it is given in place, so a
// grant of a sed that reads does not cover one that writes; -f reads a
// script countersign cannot see.
var sedCmd = &knownCmd{
	runs: []string{"-i", "--in-place", "-f", "--file"},
	safe: flags(`-n --quiet --silent -e= --expression= -E -r --regexp-extended -s --separate -u --unbuffered
		-z --null-data -l= --line-length= --posix --debug --sandbox -b --binary --follow-symlinks --help --version`),
	value: runsIf(func(flag, v string) bool {
		return (flag == "-e" || flag == "--expression") && sedRuns(v)
	}),
	operands: func(ops []arg, seen []string) verdict {
		for _, f := range seen {
			if f == "-e" || f == "--expression" {
				return knows
			}
		}
		return runsWhen(len(ops) > 0 && (!ops[0].ok || sedRuns(ops[0].text)))
	},
}

var tarCmd = &knownCmd{
	runs: []string{"--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script",
		"--new-volume-script", "-F", "--rsh-command", "--rmt-command", "--index-file", "--volno-file"},
	safe: tarFlags,
	prep: oldStyle,
}

var tarFlags = flags(`-A -c -d -r -t -u -x -z -j -J -Z -a -v -k -m -O -p -P -s -S -h -i -B -W -G -U -o -l -w -M
		-f= -C= -T= -X= -b= -H= -K= -N= -L= -V= -g=
		--create --extract --get --list --append --update --diff --compare --delete --concatenate --catenate
		--file= --directory= --files-from= --exclude= --exclude-from= --exclude-vcs --exclude-vcs-ignores
		--exclude-caches --null --strip-components= --transform= --xform= --wildcards --no-wildcards --anchored
		--gzip --gunzip --ungzip --bzip2 --xz --lzma --lzip --lzop --zstd --compress --uncompress --auto-compress
		--verbose --keep-old-files --skip-old-files --keep-newer-files --overwrite --to-stdout
		--preserve-permissions --same-permissions --no-same-owner --no-same-permissions --same-owner
		--numeric-owner --owner= --group= --mode= --mtime= --sort= --format= --totals --checkpoint --checkpoint=
		--warning= --show-transformed-names --one-file-system --dereference --hard-dereference --absolute-names
		--no-recursion --recursion --atime-preserve --ignore-zeros --ignore-failed-read --blocking-factor=
		--record-size= --label= --force-local --no-overwrite-dir --keep-directory-symlink --unlink-first
		--recursive-unlink --remove-files --touch --delay-directory-restore --pax-option= --posix --acls
		--xattrs --selinux --no-acls --no-xattrs --no-selinux --newer= --after-date= --newer-mtime=
		--starting-file= --verify --listed-incremental= --incremental --level= --ignore-case --no-ignore-case
		--utc --full-time --multi-volume --help --version --usage --show-defaults`)

// oldStyle reads tar's old-style first argument (tar xzf a.tgz, tar cIf
// prog a) as the flags it is, one a word: each letter that takes a value
// takes the next word after the bundle, in order. A bundle holding
// anything but letters and digits is left an operand, so that the words
// after it are still read as flags: a '-' in it would otherwise become
// "--" and hide them ("tar A- --to-command=…").
func oldStyle(args []arg) []arg {
	if len(args) == 0 || !args[0].ok || args[0].text == "" || strings.HasPrefix(args[0].text, "-") ||
		strings.ContainsFunc(args[0].text, func(c rune) bool { return !isAlnum(c) }) {
		return args
	}
	out := make([]arg, 0, len(args)+len(args[0].text))
	next := 1
	for _, c := range args[0].text {
		out = append(out, arg{"-" + string(c), true, true})
		if tarFlags["-"+string(c)] == oneValue && next < len(args) {
			out = append(out, args[next])
			next++
		}
	}
	return append(out, args[next:]...)
}

var rsyncCmd = &knownCmd{
	runs: []string{"-e", "--rsh", "--rsync-path", "-M", "--remote-option", "--daemon", "--config", "--log-file",
		"--write-batch", "--only-write-batch"},
	safe: flags(`-a -v -q -c -r -R -l -L -k -K -H -p -E -X -A -o -D -g -t -O -J -S -n -W -x -z -h -P -i -u -y -b
		-d -m -0 -8 -F -C -I -4 -6 -s -f= -T= -B=
		--archive --verbose --quiet --checksum --recursive --relative --no-relative --links --copy-links
		--copy-dirlinks --keep-dirlinks --perms --executability --acls --xattrs --owner --group --devices
		--specials --times --atimes --crtimes --omit-dir-times --omit-link-times --sparse --dry-run
		--whole-file --no-whole-file --one-file-system --compress --human-readable --progress --partial
		--itemize-changes --update --backup --dirs --delete --delete-before --delete-during --delete-delay
		--delete-after --delete-excluded --delete-missing-args --ignore-errors --force --exclude= --include=
		--exclude-from= --include-from= --filter= --files-from= --from0 --stats --size-only --ignore-existing
		--ignore-times --existing --inplace --append --append-verify --no-perms --no-owner --no-group
		--no-times --no-links --chmod= --chown= --usermap= --groupmap= --bwlimit= --timeout= --contimeout=
		--port= --max-size= --min-size= --max-delete= --compare-dest= --copy-dest= --link-dest= --backup-dir=
		--suffix= --temp-dir= --partial-dir= --info= --debug= --out-format= --mkpath --safe-links
		--copy-unsafe-links --hard-links --numeric-ids --cvs-exclude --prune-empty-dirs --remove-source-files
		--no-motd --blocking-io --list-only --protect-args --secluded-args --ipv4 --ipv6 --8-bit-output
		--delay-updates --fuzzy --checksum-choice= --compress-choice= --compress-level= --block-size=
		--modify-window= --preallocate --super --fake-super --help --version`),
}

// sshRuns are ssh's runs flags: -F reads a config that may hold a
// ProxyCommand, -E writes a log file it names, -I loads a PKCS#11 library;
// -o options are read by sshOption, and a remote command is an operand.
var sshCmd = &knownCmd{
	runs: []string{"-F", "-E", "-I", "-o ProxyCommand", "-o LocalCommand", "-o PermitLocalCommand",
		"-o KnownHostsCommand", "-o Match", "-o Include", "-o PKCS11Provider", "-o SecurityKeyProvider"},
	safe: flags(`-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y
		-B= -b= -c= -D= -e= -i= -J= -L= -l= -m= -O= -o= -p= -Q= -R= -S= -W= -w=`),
	value: runsIf(sshOption),
	// The first operand is the destination; any other is a command the
	// remote shell runs.
	operands: func(ops []arg, _ []string) verdict { return runsWhen(len(ops) > 1) },
}

var scpCmd = &knownCmd{
	runs:  []string{"-S", "-F", "-D", "-o ProxyCommand", "-o LocalCommand"},
	safe:  flags(`-3 -4 -6 -A -B -C -O -p -q -R -r -s -T -v -c= -i= -J= -l= -o= -P= -X=`),
	value: runsIf(sshOption),
}

// sshOption refuses a -o option ssh's own parser would read as one whose
// keyword (case-insensitive, before "=" or a blank) is not in sshSafe:
// ProxyCommand, LocalCommand, KnownHostsCommand, Match exec, Include and
// the like run a command or read one.
func sshOption(flag, v string) bool {
	if flag != "-o" {
		return false
	}
	key, _, _ := strings.Cut(strings.TrimLeft(v, " \t"), "=")
	key, _, _ = strings.Cut(key, " ")
	key, _, _ = strings.Cut(key, "\t")
	return !sshSafe[strings.ToLower(key)]
}

var sshSafe = set("batchmode", "connecttimeout", "connectionattempts", "stricthostkeychecking", "userknownhostsfile",
	"globalknownhostsfile", "port", "user", "hostname", "identityfile", "identitiesonly", "loglevel",
	"serveraliveinterval", "serveralivecountmax", "tcpkeepalive", "compression", "requesttty", "forwardagent",
	"forwardx11", "controlmaster", "controlpath", "controlpersist", "addkeystoagent", "passwordauthentication",
	"pubkeyauthentication", "kbdinteractiveauthentication", "preferredauthentications", "hostkeyalgorithms",
	"pubkeyacceptedalgorithms", "exitonforwardfailure", "checkhostip", "updatehostkeys", "visualhostkey",
	"hashknownhosts", "ipqos", "addressfamily", "loglevel", "numberofpasswordprompts", "sendenv", "setenv",
	"localforward", "remoteforward", "dynamicforward", "clearallforwardings", "gatewayports", "escapechar")

// make: another makefile (-f), an included directory (-I), --eval, and
// a variable given on the command line (SHELL=…, CC=…: make runs it) run
// code the Makefile did not hold.
var makeCmd = &knownCmd{
	runs: []string{"-f", "--file", "--makefile", "--eval", "-E", "-I", "--include-dir", "SHELL=", "MAKESHELL="},
	safe: flags(`-B -d -e -i -k -n -q -r -R -s -S -t -v -w -p -L -h --always-make --environment-overrides
		--ignore-errors --keep-going --no-keep-going --stop --dry-run --just-print --recon --question
		--no-builtin-rules --no-builtin-variables --silent --quiet --no-silent --touch --version
		--print-directory --no-print-directory --warn-undefined-variables --trace --print-data-base
		--check-symlink-times --help -C= --directory= -j= --jobs= -l= --load-average= --max-load= -O= --output-sync=
		--debug= -o= --old-file= --assume-old= -W= --what-if= --new-file= --assume-new=`),
	operands: func(ops []arg, _ []string) verdict {
		for _, o := range ops {
			if !o.ok || strings.Contains(o.text, "=") {
				return runs
			}
		}
		return knows
	},
}

// runsWhen is runs when bad is true, else knows.
func runsWhen(bad bool) verdict {
	if bad {
		return runs
	}
	return knows
}

// isAlnum reports whether c is an ASCII letter or digit.
func isAlnum(c rune) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
