# Parses the runnable examples of one markdown file (see check_examples.sh for the convention).
#
#   awk -v mode=extract -v dir=DIR -v prefix=P -f examples.awk FILE.md
#     writes DIR/P<n>.cmd (the command) and DIR/P<n>.exp (the expected output) per example and
#     prints a manifest, one tab-separated line per example or problem:
#       run     <id> <line>              a '$ gpuadvisor ...' command
#       status  <id> <line> <run id>     a '$ echo $?' line: the exit status of <run id>
#       error   -    <line> <message>    something the checker cannot run
#   awk -v mode=rewrite -v dir=DIR -v prefix=P -f examples.awk FILE.md
#     prints FILE.md with each example's output replaced by DIR/P<id>.out
#
# Written for POSIX awk (mawk, the awk of Debian).

function problem(line, msg) {
  if (mode == "extract") printf "error\t-\t%d\t%s\n", line, msg
}

function finish_command(    id, kind, f, l) {
  n++
  id = prefix n
  if (cmd ~ /^([A-Za-z_][A-Za-z0-9_]*=[^ \t]* +)*gpuadvisor([ \t]|$)/) {
    kind = "run"
    last_run = id
  } else if (cmd == "echo $?") {
    kind = "status"
    if (last_run == "") {
      problem(cmd_line, "'$ echo $?' must follow a '$ gpuadvisor' command in the same block")
      kind = ""
    }
  } else {
    problem(cmd_line, "not a gpuadvisor command: '$ " cmd "' (console blocks run '$ gpuadvisor ...' and '$ echo $?'; use a sh block for other commands)")
    kind = ""
  }
  if (mode == "extract") {
    if (kind != "") {
      f = dir "/" id ".cmd"
      printf "%s\n", cmd > f
      close(f)
      if (kind == "run") printf "run\t%s\t%d\n", id, cmd_line
      else printf "status\t%s\t%d\t%s\n", id, cmd_line, last_run
    }
    if (expf != "") close(expf)
    expf = dir "/" id ".exp"
    printf "" > expf
  } else if (kind != "") {
    keep_old = 0
    f = dir "/" id ".out"
    while ((getline l < f) > 0) print l
    close(f)
  }
  if (kind == "") keep_old = 1
  ncmd++
  cmd = ""
}

BEGIN { state = "text"; n = 0; expf = "" }

{
  line = $0
  sub(/\r$/, "", line)
}

state == "text" {
  if (line ~ /^[ \t]+```console/)
    problem(NR, "an indented console fence is not run: start it in the first column")
  if (line ~ /^```console[ \t]*$/) {
    state = "console"; block_line = NR; ncmd = 0; last_run = ""; cont = 0; keep_old = 0
  } else if (line ~ /^```/) {
    state = "other"
    info = substr(line, 4)
    gsub(/[ \t]/, "", info)
  }
  if (mode == "rewrite") print $0
  next
}

state == "other" {
  if (line ~ /^```[ \t]*$/) state = "text"
  else if (info == "" && line ~ /^\$ gpuadvisor([ \t]|$)/)
    problem(NR, "a '$ gpuadvisor' line in a fence without an info string: make it a console block to run it, or a sh block (without the output) to show it unrun")
  if (mode == "rewrite") print $0
  next
}

# state == "console"
cont {
  cmd = cmd "\n" line
  if (mode == "rewrite") print $0
  if (line !~ /\\$/) { cont = 0; finish_command() }
  next
}

line ~ /^```[ \t]*$/ {
  if (ncmd == 0) problem(block_line, "a console block without a '$ gpuadvisor' command")
  if (expf != "") { close(expf); expf = "" }
  state = "text"
  if (mode == "rewrite") print $0
  next
}

# A '$ ' line is a command when it runs gpuadvisor or echoes the status, or when no command came
# before it in the block (then it is an error). Otherwise it is output that happens to start with
# '$ ' (compare prints a "$ per FP16 TFLOPS" row); check_examples.sh makes sure the command really
# prints it, so a stray '$ nvidia-smi' still fails.
line ~ /^\$ ([A-Za-z_][A-Za-z0-9_]*=[^ \t]* +)*gpuadvisor([ \t]|$)/ || line ~ /^\$ echo \$\?[ \t]*$/ ||
(line ~ /^\$ / && ncmd == 0) {
  cmd = substr(line, 3)
  sub(/[ \t]+$/, "", cmd)
  cmd_line = NR
  if (mode == "rewrite") print $0
  if (line ~ /\\$/) cont = 1
  else finish_command()
  next
}

{
  if (ncmd == 0) {
    problem(NR, "a console block must start with a '$ gpuadvisor' command")
    if (mode == "rewrite") print $0
  } else if (mode == "rewrite" && keep_old) {
    print $0
  } else if (mode == "extract") {
    print line > expf
  }
}

END {
  if (state == "console") problem(block_line, "a console block that is never closed")
  if (expf != "") close(expf)
}
