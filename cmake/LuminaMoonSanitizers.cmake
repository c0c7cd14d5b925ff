# LUMINAMOON_SANITIZE=ON instruments every target with ASan + UBSan (off by default, as in
# simdjson). UBSan findings abort so tests cannot pass over undefined behaviour.
if(LUMINAMOON_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
endif()
