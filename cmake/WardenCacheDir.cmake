# warden_cache_dir(OUT ENV_NAME NAME): the folder the fetch scripts (scripts/fetch-*) unpack an
# npm package into, as they compute it: $ENV_NAME, else $XDG_CACHE_HOME/warden/NAME, else
# ~/.cache/warden/NAME. The build reads what they fetched from there.
function(warden_cache_dir out env_name name)
  if(DEFINED ENV{${env_name}})
    set(dir "$ENV{${env_name}}")
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(dir "$ENV{XDG_CACHE_HOME}/warden/${name}")
  else()
    set(dir "$ENV{HOME}/.cache/warden/${name}")
  endif()
  set(${out} "${dir}" PARENT_SCOPE)
endfunction()
