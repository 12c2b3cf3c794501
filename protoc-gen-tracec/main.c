/* placeholder, replaced by the real plugin */
int main(void) { return 0; }
