# LUMINAMOON_SANITIZE=ON instruments every target with ASan + UBSan (off by default, as in
# simdjson). UBSan findings abort so tests cannot pass over undefined behaviour.
if(LUMINAMOON_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()

# LUMINAMOON_SANITIZE_THREAD=ON instruments every target with ThreadSanitizer: the commit path's
# threaded tests (target luminamoon_concurrency_tests) and the Python module for the threaded
# driver tests/tsan_driver.py (scripts/test.sh). TSan cannot be combined with ASan.
if(LUMINAMOON_SANITIZE_THREAD)
  if(LUMINAMOON_SANITIZE)
    message(FATAL_ERROR "LUMINAMOON_SANITIZE_THREAD and LUMINAMOON_SANITIZE are exclusive")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=thread)
endif()
