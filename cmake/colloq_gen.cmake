# wk_colloq_generate(PREFIX PLAN OUT_DIR SOURCES_VAR): the binary codec of the conversation or
# plan file PLAN as C (OUT_DIR/PREFIX.h, OUT_DIR/PREFIX.c), written at build time by the freshly
# built CLI (`wirekit colloq gen`, issue 19). Sets SOURCES_VAR to the generated source; add
# OUT_DIR to the consumer's include path. Re-runs when the CLI or PLAN changes.
function(wk_colloq_generate prefix plan outdir srcvar)
  add_custom_command(
    OUTPUT ${outdir}/${prefix}.h ${outdir}/${prefix}.c
    COMMAND ${CMAKE_COMMAND} -E make_directory ${outdir}
    COMMAND $<TARGET_FILE:wirekit_cli> colloq gen --plan ${plan} --prefix ${prefix} --out-dir ${outdir}
    DEPENDS wirekit_cli ${plan}
    COMMENT "wirekit colloq gen: ${prefix} from ${plan}"
    VERBATIM)
  set(${srcvar} ${outdir}/${prefix}.c PARENT_SCOPE)
endfunction()
