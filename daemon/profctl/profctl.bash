# SPDX-License-Identifier: MIT
# bash completion for profctl(1)
_profctl_pids()
{
	local p
	for p in /dev/shm/prof.*; do
		[ -O "$p" ] || continue
		p=${p#/dev/shm/prof.}
		echo "${p%%.*}"
	done
}

_profctl()
{
	local cur prev verb
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	verb=${COMP_WORDS[1]}

	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "list report reset top status zones clean save diff serve trace --help --version" -- "$cur"))
		return
	fi
	case $prev in
	--pid|-p)
		COMPREPLY=($(compgen -W "$(_profctl_pids)" -- "$cur")); return ;;
	--sort|-s)
		if [ "$verb" = top ]; then
			COMPREPLY=($(compgen -W "self total calls max oncpu self-oncpu" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "self total calls max p99 oncpu self-oncpu" -- "$cur"))
		fi
		return ;;
	--format|-f)
		if [ "$verb" = list ]; then
			COMPREPLY=($(compgen -W "text json" -- "$cur"))
		elif [ "$verb" = trace ]; then
			COMPREPLY=($(compgen -W "json html" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "text json csv folded html pprof" -- "$cur"))
		fi
		return ;;
	--weight)
		COMPREPLY=($(compgen -W "wall oncpu" -- "$cur")); return ;;
	--color)
		COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
	--last)
		COMPREPLY=($(compgen -W "10s 30s 1m 5m" -- "$cur")); return ;;
	-o|--output|--input)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--tid|-t|--callers|--rows|-d|--delay|-n|--iterations|--listen|--max-zones|--max-threads|--timeout|--slow|--count)
		return ;;
	esac
	case $verb in
	report)
		COMPREPLY=($(compgen -W "--pid --tid --since-reset --since-start --last --sort --flat
			--callers --merge-threads --format --weight --output --rows --color --input --compensate
			--no-daemon --help" -- "$cur")) ;;
	reset)	COMPREPLY=($(compgen -W "--pid --no-daemon --help" -- "$cur")) ;;
	top)	COMPREPLY=($(compgen -W "--pid --delay --iterations --sort --no-daemon --help" -- "$cur")) ;;
	list)	COMPREPLY=($(compgen -W "--format --no-daemon --help" -- "$cur")) ;;
	status)	COMPREPLY=($(compgen -W "--no-daemon --help" -- "$cur")) ;;
	clean)	COMPREPLY=($(compgen -W "--pid --dry-run --help" -- "$cur")) ;;
	save)	COMPREPLY=($(compgen -W "--pid --since-reset --since-start --last --output --no-daemon --help" -- "$cur")) ;;
	diff)	COMPREPLY=($(compgen -W "--sort --per-call --per-frame --rows --format --output --color --since-reset --since-start --no-daemon --help" -- "$cur") $(compgen -f -- "$cur")) ;;
	serve)	COMPREPLY=($(compgen -W "--listen --threads --max-zones --max-threads --timeout --all-users --no-daemon --help" -- "$cur")) ;;
	trace)	COMPREPLY=($(compgen -W "--pid --tid --last --slow --count --format --output --no-daemon --help" -- "$cur")) ;;
	zones)
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help" -- "$cur"))
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi ;;
	esac
}
complete -F _profctl profctl
