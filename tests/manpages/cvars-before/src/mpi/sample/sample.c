/* CVAR blocks of a stock tree, for maint/make-manpages --check (see sample_cvars.7). */
/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

categories :
    - name : SAMPLE
      description : A category for the sample variables

cvars:
    - name        : MPIR_CVAR_SAMPLE_POLL
      category    : SAMPLE
      type        : int
      default     : 8
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        How often to poll.

    - name        : MPIR_CVAR_SAMPLE_SAME
      category    : SAMPLE
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : Not changed.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/
