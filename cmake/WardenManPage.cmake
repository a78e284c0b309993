# warden(1), gzip'd, from the built binary's own --help (cmake -P; cmake/WardenPackaging.cmake
# runs it at build time, so the page cannot drift from the flags). help2man writes the page
# from `warden --help`; it has no notion of subcommands, so every subcommand's --help (and
# theirs, recursively) is rendered here as a SUBCOMMANDS section it includes.
#
#   cmake -DWARDEN=BIN -DHELP2MAN=help2man -DGZIP=gzip -DVERSION=0.1.0 -DOUT=warden.1.gz
#         -DBANK=... -DUSE_LITE=... -DENV_FILE=... -DUNIT=... -P WardenManPage.cmake
foreach(var WARDEN HELP2MAN GZIP VERSION OUT BANK USE_LITE ENV_FILE UNIT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "WardenManPage.cmake: -D${var}= is required")
  endif()
endforeach()

# Text -> roff: backslashes and hyphens escaped, a leading control character neutralised.
function(roff_escape text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(REPLACE "-" "\\-" text "${text}")
  if(text MATCHES "^[.']")
    set(text "\\&${text}")
  endif()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# One command's --help (CLI11's layout: a description, "Usage:", then "Name:" headings over
# entries "  SPEC  DESCRIPTION", a long SPEC putting its description on the next, deeper
# line) as roff under a .SS heading; then the same for each of its own subcommands.
function(render_command words)
  string(REPLACE ";" " " name "${words}")
  execute_process(COMMAND "${WARDEN}" ${words} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "'${WARDEN} ${name} --help' failed (${rc})")
  endif()
  string(REPLACE ";" "\\;" help "${help}")
  string(REPLACE "\n" ";" lines "${help}")
  set(roff ".SS \"${name}\"\n")
  set(section "")
  set(subcommands "")
  set(in_entry FALSE)
  foreach(line IN LISTS lines)
    string(REPLACE "\\;" ";" line "${line}")
    if(line STREQUAL "")
      continue()
    elseif(line MATCHES "^Usage: (.*)$")
      roff_escape("${CMAKE_MATCH_1}" usage)
      string(APPEND roff ".PP\nUsage: \\fB${usage}\\fR\n")
    elseif(line MATCHES "^([A-Z][A-Za-z ]*):$")
      set(section "${CMAKE_MATCH_1}")
      string(APPEND roff ".PP\n\\fI${section}:\\fR\n")
      set(in_entry FALSE)
    elseif(line MATCHES "^      +(.*)$" AND in_entry)
      roff_escape("${CMAKE_MATCH_1}" text)
      string(APPEND roff "${text}\n")
    elseif(line MATCHES "^  ([^ ].*)$")
      set(entry "${CMAKE_MATCH_1}")
      string(FIND "${entry}" "  " gap)
      set(text "")
      if(gap GREATER 0)
        string(SUBSTRING "${entry}" 0 ${gap} spec)
        string(SUBSTRING "${entry}" ${gap} -1 text)
        string(STRIP "${text}" text)
      else()
        set(spec "${entry}")
      endif()
      if(section STREQUAL "Subcommands")
        string(REGEX MATCH "^[^ ]+" sub "${spec}")
        list(APPEND subcommands "${sub}")
      endif()
      roff_escape("${spec}" spec)
      roff_escape("${text}" text)
      string(APPEND roff ".TP\n\\fB${spec}\\fR\n")
      if(NOT text STREQUAL "")
        string(APPEND roff "${text}\n")
      endif()
      set(in_entry TRUE)
    else()
      # The description line(s) before Usage:.
      roff_escape("${line}" text)
      string(APPEND roff ".PP\n${text}\n")
    endif()
  endforeach()
  set_property(GLOBAL APPEND_STRING PROPERTY warden_man_subcommands "${roff}")
  foreach(sub IN LISTS subcommands)
    render_command("${words};${sub}")
  endforeach()
endfunction()

# The top level's subcommands: the entries under its "Subcommands:" heading.
execute_process(COMMAND "${WARDEN}" --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "'${WARDEN} --help' failed (${rc})")
endif()
string(REGEX REPLACE "^.*\nSubcommands:\n" "" listing "${top}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z0-9-]*" names "${listing}")
if(NOT names)
  message(FATAL_ERROR "no subcommands found in '${WARDEN} --help'")
endif()
foreach(entry IN LISTS names)
  string(STRIP "${entry}" sub)
  render_command("${sub}")
endforeach()
get_property(subcommands GLOBAL PROPERTY warden_man_subcommands)

get_filename_component(out_dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${out_dir}")
set(include_file "${out_dir}/warden.h2m")
file(WRITE "${include_file}" "[NAME]
warden \\- embeddings, reranking and a prompt-injection guard on the CPU, over HTTP and gRPC
[SUBCOMMANDS]
Every subcommand's own \\fB\\-\\-help\\fR, as this version prints it.
${subcommands}
[ENVIRONMENT]
.TP
\\fBWARDEN_*\\fR
Every flag of \\fBwarden serve\\fR is also read from the variable named beside it above.
.TP
\\fBWARDEN_GUARD_BANK\\fR
The guard's labelled bank (default: \\fI${BANK}\\fR).
.TP
\\fBWARDEN_USE_LITE_DIR\\fR
The converted USE-lite model, the built-in default (default: the user's
\\fI~/.cache/warden/use\\-lite/model\\fR when converted there, else \\fI${USE_LITE}\\fR).
.TP
\\fBHF_HOME\\fR, \\fBHF_TOKEN\\fR, \\fBHF_ENDPOINT\\fR
Models by HuggingFace id: the cache, the token for gated models, a mirror.
[FILES]
.TP
\\fI${ENV_FILE}\\fR
The configuration of the \\fBwarden\\fR systemd service (\\fI${UNIT}\\fR).
.TP
\\fI${BANK}\\fR
The guard's bank.
.TP
\\fI${USE_LITE}\\fR
Universal Sentence Encoder Lite, converted (Apache\\-2.0; its LICENSE is beside it).
")

set(page "${out_dir}/warden.1")
execute_process(
  COMMAND "${HELP2MAN}" --no-info --version-string=${VERSION}
          --section=1 --include=${include_file} --output=${page} "${WARDEN}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc})")
endif()
# -n: no name or time stamp in the gzip header, so the same page gives the same bytes.
execute_process(COMMAND "${GZIP}" -9nf "${page}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS "${OUT}")
  message(FATAL_ERROR "gzip of ${page} failed (${rc})")
endif()
