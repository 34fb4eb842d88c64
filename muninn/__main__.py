from muninn.cli import main

main()
