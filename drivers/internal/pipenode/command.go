package pipenode

import (
	"fmt"
	"strconv"
	"strings"
)

// Command is one of redlock's commands, split as the clients' builders
// want it: the words before the keys, the keys (whose hash slot routes
// the command in a cluster), and the words after them.
type Command struct {
	Head, Keys, Tail []string
}

// command splits args, a redlock.Node's command, into a Command. Only
// the commands redlock sends have keys: SET and the scripts.
func command(args []any) (Command, error) {
	words := make([]string, len(args))
	for i, a := range args {
		switch a := a.(type) {
		case string:
			words[i] = a
		case int64:
			words[i] = strconv.FormatInt(a, 10)
		default:
			return Command{}, fmt.Errorf("argument %d of a command is a %T, want a string or an int64", i, a)
		}
	}
	if len(words) == 0 {
		return Command{}, fmt.Errorf("an empty command")
	}
	switch strings.ToUpper(words[0]) {
	case "SET", "GET", "DEL", "PEXPIRE", "PTTL":
		if len(words) >= 2 {
			return Command{Head: words[:1], Keys: words[1:2], Tail: words[2:]}, nil
		}
	case "EVAL", "EVALSHA":
		if len(words) >= 3 {
			n, err := strconv.Atoi(words[2])
			if err == nil && n >= 0 && 3+n <= len(words) {
				return Command{Head: words[:3], Keys: words[3 : 3+n], Tail: words[3+n:]}, nil
			}
		}
	}
	return Command{Head: words}, nil
}
