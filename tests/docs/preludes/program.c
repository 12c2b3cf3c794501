/* doc-sample: run - a whole program: built, linked with every tracec library, run in an empty folder. */
@SAMPLE@
