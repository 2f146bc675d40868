/* placeholder so the library has a source until models land */ typedef int mdl_placeholder_t;
