# Warnings are errors for our own targets (never for third-party headers, which are SYSTEM).
function(luminamoon_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion
                                           -Wshadow -Wnon-virtual-dtor -Werror)
endfunction()
