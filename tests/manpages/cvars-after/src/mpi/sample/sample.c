/* CVAR blocks of a patched tree, for maint/make-manpages --check (see sample_cvars.7). */
/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : SAMPLE
      description : A category for the sample variables
    - name : SAMPLE_NEW
      description : >-
        A category the patches add

cvars:
    - name        : MPIR_CVAR_SAMPLE_POLL
      category    : SAMPLE
      type        : int
      default     : 16
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        How often to poll, in requests (a \ and
        .dot at a line start stay text).

    - name        : MPIR_CVAR_SAMPLE_SAME
      category    : SAMPLE
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : Not changed.

    - name        : MPIR_CVAR_SAMPLE_ORDER
      category    : SAMPLE_NEW
      type        : enum
      default     : rotate
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      alt-env     : MPIR_CVAR_SAMPLE_SCAN
      description : |-
        Where the scan starts.
        rotate - after the index reported last,
                 so every request is reported
        lowest - at index 0

        A second paragraph.

    - name        : MPIR_CVAR_SAMPLE_FILE
      category    : SAMPLE_NEW
      type        : string
      default     : ""
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : Where the report goes; empty:
        standard error.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
